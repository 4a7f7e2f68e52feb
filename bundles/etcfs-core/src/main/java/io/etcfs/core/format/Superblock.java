package io.etcfs.core.format;

import io.etcfs.spi.fs.FsRecord;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The superblock at the start of the device. It names the filesystem the device belongs to, so
 * that a mount can refuse a device whose UUID does not match the filesystem record in etcd: two
 * clusters pointed at one device must never both write it.
 *
 * <p>Layout (big-endian): magic (8) | format version (4) | UUID (16) | block size (4) | arena
 * size (8) | device size (8) | data start (8) | name length (2) | name (UTF-8) | CRC32C (4) of
 * everything before it.
 *
 * @param uuid the filesystem's identity, also stored in its etcd record
 * @param blockSize the allocation unit in bytes
 * @param arenaSize the size of one arena in bytes (a multiple of the block size)
 * @param deviceSize the usable device size in bytes
 * @param dataStart the byte offset of the first arena; before it lie the superblock and the
 *     per-node device heartbeat slots
 * @param name the filesystem's name (its etcd prefix)
 */
public record Superblock(
    UUID uuid, int blockSize, long arenaSize, long deviceSize, long dataStart, String name) {

  /**
   * 2: the block ownership records are keyed by start block alone ({@code blocks/<start>}, the
   * API's {@code BlockOwner}), no longer by arena and start; a version 1 filesystem's records
   * would read as none, so it is refused rather than mounted.
   */
  public static final int FORMAT_VERSION = 2;
  /** Bytes reserved for the superblock at offset 0. */
  public static final int SIZE = io.etcfs.spi.blockdev.DeviceLayout.SUPERBLOCK_SIZE;

  private static final byte[] MAGIC = "ETCFS\0SB".getBytes(StandardCharsets.US_ASCII);
  private static final int MAX_NAME = 64;

  public Superblock {
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    if (n.length == 0 || n.length > MAX_NAME) {
      throw new IllegalArgumentException("filesystem name must be 1 to 64 bytes: '" + name + "'");
    }
  }

  /** The number of whole arenas on the device. */
  public long arenaCount() {
    return (deviceSize - dataStart) / arenaSize;
  }

  /** The geometry the filesystem record holds. */
  public static Superblock of(FsRecord r) {
    return new Superblock(r.uuid(), r.blockSize(), r.arenaSize(), r.deviceSize(), r.dataStart(),
        r.name());
  }

  /** The filesystem record of this superblock. */
  public FsRecord record(String lockBackend, String allocBackend, Instant formatted) {
    return new FsRecord(uuid, name, blockSize, arenaSize, deviceSize, dataStart, arenaCount(),
        lockBackend, allocBackend, formatted);
  }

  public ByteBuffer encode() {
    ByteBuffer b = ByteBuffer.allocate(SIZE);
    byte[] n = name.getBytes(StandardCharsets.UTF_8);
    b.put(MAGIC).putInt(FORMAT_VERSION);
    b.putLong(uuid.getMostSignificantBits()).putLong(uuid.getLeastSignificantBits());
    b.putInt(blockSize).putLong(arenaSize).putLong(deviceSize).putLong(dataStart);
    b.putShort((short) n.length).put(n);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, b.position());
    b.putInt((int) crc.getValue());
    return b.clear();
  }

  /** True if {@code block} starts with the etcfs magic, whatever the rest holds. */
  public static boolean hasMagic(ByteBuffer block) {
    if (block.remaining() < MAGIC.length) {
      return false;
    }
    byte[] m = new byte[MAGIC.length];
    block.duplicate().get(m);
    return java.util.Arrays.equals(m, MAGIC);
  }

  /**
   * Decodes a superblock.
   *
   * @throws IllegalArgumentException with a one-line reason if the block is not a valid etcfs
   *     superblock
   */
  public static Superblock decode(ByteBuffer block) {
    ByteBuffer b = block.duplicate();
    if (!hasMagic(b)) {
      throw new IllegalArgumentException("no etcfs superblock (wrong magic)");
    }
    b.position(b.position() + MAGIC.length);
    int version = b.getInt();
    if (version != FORMAT_VERSION) {
      throw new IllegalArgumentException("formatted with etcfs format version " + version
          + "; this etcfs reads version " + FORMAT_VERSION + " only (format it again)");
    }
    UUID uuid = new UUID(b.getLong(), b.getLong());
    int blockSize = b.getInt();
    long arenaSize = b.getLong();
    long deviceSize = b.getLong();
    long dataStart = b.getLong();
    int nameLength = b.getShort();
    if (nameLength <= 0 || nameLength > MAX_NAME) {
      throw new IllegalArgumentException("corrupt etcfs superblock (name length " + nameLength + ")");
    }
    byte[] n = new byte[nameLength];
    b.get(n);
    int end = b.position() - block.position();
    CRC32C crc = new CRC32C();
    ByteBuffer covered = block.duplicate();
    covered.limit(covered.position() + end);
    crc.update(covered);
    if ((int) crc.getValue() != b.getInt()) {
      throw new IllegalArgumentException("corrupt etcfs superblock (checksum mismatch)");
    }
    return new Superblock(
        uuid, blockSize, arenaSize, deviceSize, dataStart, new String(n, StandardCharsets.UTF_8));
  }
}
