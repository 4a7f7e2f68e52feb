package io.etcfs.spi.blockdev;

/**
 * Where things live on the shared device, for every bundle that reads or writes it directly:
 * the superblock, the per-node heartbeat slots, and the start of the arenas.
 */
public final class DeviceLayout {
  /** The superblock: the first 4 KiB. */
  public static final int SUPERBLOCK_SIZE = 4096;
  /** One heartbeat slot: one 4 KiB block, so a slot is written with one aligned write. */
  public static final int HEARTBEAT_SLOT_SIZE = 4096;
  /** The heartbeat slots follow the superblock. */
  public static final long HEARTBEAT_OFFSET = SUPERBLOCK_SIZE;
  /** Slots between the superblock and the first arena: at most this many nodes at once. */
  public static final int HEARTBEAT_SLOTS = 255;
  /** The first byte of the first arena. */
  public static final long DATA_START = 1L << 20;

  private DeviceLayout() {}

  /** The device offset of heartbeat slot {@code slot}. */
  public static long heartbeatSlot(int slot) {
    if (slot < 0 || slot >= HEARTBEAT_SLOTS) {
      throw new IllegalArgumentException("heartbeat slot " + slot + " is not in 0.."
          + (HEARTBEAT_SLOTS - 1));
    }
    return HEARTBEAT_OFFSET + (long) slot * HEARTBEAT_SLOT_SIZE;
  }
}
