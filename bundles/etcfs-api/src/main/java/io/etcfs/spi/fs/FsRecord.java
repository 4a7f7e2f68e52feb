package io.etcfs.spi.fs;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Properties;
import java.util.UUID;

/**
 * The filesystem record in etcd ({@link Keyspace#record}): the identity and geometry the
 * superblock on the device also holds, the cluster-wide lock and allocator backends, and when it
 * was formatted. Stored as java.util.Properties text, so that {@code etcdctl get} shows something
 * a person can read. The one reader and writer of that text.
 *
 * @param uuid the filesystem's identity (also in the device's superblock)
 * @param name its name, the {@code <name>} of its keys
 * @param blockSize bytes per block
 * @param arenaSize bytes per allocation arena
 * @param deviceSize bytes of the device when formatted
 * @param dataStart the byte offset of the first data block
 * @param arenas how many arenas the data area holds
 * @param lockBackend the inode lock backend every node uses ({@code etcd}, {@code hazelcast})
 * @param allocBackend the block allocator every node uses
 * @param formatted when {@code etcfs format} wrote it
 */
public record FsRecord(UUID uuid, String name, int blockSize, long arenaSize, long deviceSize,
    long dataStart, long arenas, String lockBackend, String allocBackend, Instant formatted) {

  public FsRecord {
    if (blockSize <= 0 || arenaSize <= 0 || arenaSize % blockSize != 0 || dataStart < 0
        || dataStart % blockSize != 0 || arenas < 0 || deviceSize < dataStart) {
      throw new IllegalArgumentException("impossible geometry: blockSize " + blockSize
          + ", arenaSize " + arenaSize + ", deviceSize " + deviceSize + ", dataStart "
          + dataStart + ", arenas " + arenas);
    }
  }

  /** The first data block. */
  public long firstBlock() {
    return dataStart / blockSize;
  }

  /** Blocks per arena. */
  public long blocksPerArena() {
    return arenaSize / blockSize;
  }

  public byte[] encode() {
    Properties p = new Properties();
    p.setProperty("uuid", uuid.toString());
    p.setProperty("name", name);
    p.setProperty("blockSize", Integer.toString(blockSize));
    p.setProperty("arenaSize", Long.toString(arenaSize));
    p.setProperty("deviceSize", Long.toString(deviceSize));
    p.setProperty("dataStart", Long.toString(dataStart));
    p.setProperty("arenas", Long.toString(arenas));
    p.setProperty("lockBackend", lockBackend);
    p.setProperty("allocBackend", allocBackend);
    p.setProperty("formatted", formatted.toString());
    StringWriter w = new StringWriter();
    try {
      p.store(w, "etcfs filesystem record");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return w.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Decodes a record.
   *
   * @throws IllegalArgumentException naming the missing or malformed field
   */
  public static FsRecord decode(byte[] bytes) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(new String(bytes, StandardCharsets.UTF_8)));
      return new FsRecord(UUID.fromString(field(p, "uuid")), field(p, "name"),
          Integer.parseInt(field(p, "blockSize")), Long.parseLong(field(p, "arenaSize")),
          Long.parseLong(field(p, "deviceSize")), Long.parseLong(field(p, "dataStart")),
          Long.parseLong(field(p, "arenas")), field(p, "lockBackend"), field(p, "allocBackend"),
          Instant.parse(field(p, "formatted")));
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("corrupt filesystem record in etcd: " + e.getMessage(), e);
    }
  }

  private static String field(Properties p, String name) {
    String v = p.getProperty(name);
    if (v == null) {
      throw new IllegalArgumentException("missing field '" + name + "'");
    }
    return v;
  }
}
