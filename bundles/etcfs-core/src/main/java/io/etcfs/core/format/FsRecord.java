package io.etcfs.core.format;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Properties;
import java.util.UUID;

/**
 * The filesystem record in etcd ({@link FsKeys#record()}): the superblock's geometry, the
 * cluster-wide lock and allocator backends, and when it was formatted. Stored as a
 * java.util.Properties text so that {@code etcdctl get} shows something a person can read.
 */
public record FsRecord(
    Superblock superblock, String lockBackend, String allocBackend, Instant formatted) {

  public byte[] encode() {
    Properties p = new Properties();
    Superblock s = superblock;
    p.setProperty("uuid", s.uuid().toString());
    p.setProperty("name", s.name());
    p.setProperty("blockSize", Integer.toString(s.blockSize()));
    p.setProperty("arenaSize", Long.toString(s.arenaSize()));
    p.setProperty("deviceSize", Long.toString(s.deviceSize()));
    p.setProperty("dataStart", Long.toString(s.dataStart()));
    p.setProperty("arenas", Long.toString(s.arenaCount()));
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
      Superblock s =
          new Superblock(
              UUID.fromString(field(p, "uuid")),
              Integer.parseInt(field(p, "blockSize")),
              Long.parseLong(field(p, "arenaSize")),
              Long.parseLong(field(p, "deviceSize")),
              Long.parseLong(field(p, "dataStart")),
              field(p, "name"));
      return new FsRecord(
          s, field(p, "lockBackend"), field(p, "allocBackend"), Instant.parse(field(p, "formatted")));
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
