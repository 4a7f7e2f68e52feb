package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import java.nio.charset.StandardCharsets;

/**
 * The etcd lock backend's keys: {@code /etcfs/<fs>/locks/<ino 16 hex>/<lease 16 hex>}, one per
 * request of a session, valued {@code "S <node>"} or {@code "X <node>"}. Key order within an
 * inode is not queue order: the create revision is.
 */
final class LockKeys {
  /** The inode and the session lease a lock key names. */
  record Parts(long inode, long lease) {}

  private final String prefix;
  private final String nodeName;

  LockKeys(String fsName, String nodeName) {
    this.prefix = Keyspace.of(fsName).key(Keyspace.LOCKS);
    this.nodeName = nodeName;
  }

  /** Every lock key starts so. */
  String prefix() {
    return prefix;
  }

  byte[] all() {
    return Keys.of(prefix);
  }

  /** The keys of one inode's requests. */
  byte[] inode(long inode) {
    return Keys.of(prefix + Keyspace.hex(inode) + "/");
  }

  byte[] key(long inode, long lease) {
    return Keys.of(prefix + Keyspace.hex(inode) + "/" + Keyspace.hex(lease));
  }

  /** This node's request in {@code mode}. */
  byte[] value(LockMode mode) {
    return (code(mode) + " " + nodeName).getBytes(StandardCharsets.UTF_8);
  }

  /** {@code key} parsed, or null for any other key. */
  Parts parse(String key) {
    if (!key.startsWith(prefix)) {
      return null;
    }
    int slash = key.indexOf('/', prefix.length());
    if (slash < 0) {
      return null;
    }
    try {
      return new Parts(Long.parseUnsignedLong(key.substring(prefix.length(), slash), 16),
          Long.parseUnsignedLong(key.substring(slash + 1), 16));
    } catch (NumberFormatException bad) {
      return null;
    }
  }

  static String code(LockMode mode) {
    return mode == LockMode.EXCLUSIVE ? "X" : "S";
  }

  static LockMode mode(KeyValue kv) {
    return kv.valueString().startsWith("S") ? LockMode.SHARED : LockMode.EXCLUSIVE;
  }

  /** The node a request's value names, or "?". */
  static String node(KeyValue kv) {
    String value = kv.valueString();
    return value.length() > 2 ? value.substring(2) : "?";
  }

  static String str(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }
}
