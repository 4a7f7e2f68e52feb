package io.etcfs.spi.vfs;

/**
 * What {@code statfs} reports.
 *
 * @param blockSize the allocation unit
 * @param totalBlocks data blocks on the device
 * @param freeBlocks blocks free
 * @param totalInodes inode numbers the filesystem can still hand out plus those in use
 * @param freeInodes inode numbers left
 * @param maxNameLength the longest name, in bytes
 */
public record StatFs(
    long blockSize, long totalBlocks, long freeBlocks, long totalInodes, long freeInodes,
    int maxNameLength) {}
