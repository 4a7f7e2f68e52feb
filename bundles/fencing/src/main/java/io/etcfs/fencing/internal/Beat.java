package io.etcfs.fencing.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * One device heartbeat: what a node writes into its slot (one 4 KiB block) every beat.
 *
 * <pre>
 *   0  8  magic "ETCFSHB1"        24  8  counter (one more every beat)
 *   8  4  format version (1)       32  8  wall-clock millis (for people; never used to decide)
 *  12  4  state                    40  2  name length, then the node name (UTF-8, at most 255 bytes)
 *  16  8  generation             4092  4  CRC32C of bytes 0..4091
 * </pre>
 *
 * @param state {@link #LIVE}, {@link #FENCED} (the node fenced itself and stopped device I/O) or
 *     {@link #LEFT} (a clean leave)
 */
record Beat(int state, long generation, long counter, long wallMillis, String node) {
  static final int LIVE = 1;
  static final int FENCED = 2;
  static final int LEFT = 3;
  static final int SIZE = 4096;
  private static final byte[] MAGIC = "ETCFSHB1".getBytes(StandardCharsets.US_ASCII);
  private static final int VERSION = 1;

  /** Writes the beat into {@code block} (position 0, {@link #SIZE} bytes). */
  void encode(ByteBuffer block) {
    ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    b.clear();
    b.put(new byte[SIZE]).clear();
    byte[] name = node.getBytes(StandardCharsets.UTF_8);
    b.put(MAGIC).putInt(VERSION).putInt(state).putLong(generation).putLong(counter)
        .putLong(wallMillis).putShort((short) Math.min(name.length, 255))
        .put(name, 0, Math.min(name.length, 255));
    b.putInt(SIZE - 4, crc(b));
  }

  /** The beat in {@code block}, or empty if it holds none (zeroed by format, torn, or garbage). */
  static Optional<Beat> decode(ByteBuffer block) {
    ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    b.clear();
    byte[] magic = new byte[MAGIC.length];
    b.get(magic);
    if (!java.util.Arrays.equals(magic, MAGIC) || b.getInt() != VERSION
        || b.getInt(SIZE - 4) != crc(b)) {
      return Optional.empty();
    }
    int state = b.getInt();
    long generation = b.getLong();
    long counter = b.getLong();
    long wall = b.getLong();
    int len = b.getShort() & 0xffff;
    if (len > 255) {
      return Optional.empty();
    }
    byte[] name = new byte[len];
    b.get(name);
    return Optional.of(new Beat(state, generation, counter, wall,
        new String(name, StandardCharsets.UTF_8)));
  }

  String stateName() {
    return switch (state) {
      case LIVE -> "live";
      case FENCED -> "fenced";
      case LEFT -> "left";
      default -> "state " + state;
    };
  }

  private static int crc(ByteBuffer b) {
    CRC32C crc = new CRC32C();
    crc.update(b.duplicate().position(0).limit(SIZE - 4));
    return (int) crc.getValue();
  }
}
