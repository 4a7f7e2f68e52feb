package io.etcfs.core.fs;

import io.etcfs.core.fs.cache.MetaCache;
import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Extended attributes, one key each. All of an inode's xattrs are cached together, so the
 * kernel's {@code getxattr("security.capability")} before every write is answered from memory
 * (the watch keeps it right) and a miss for a name costs nothing.
 */
final class Xattrs {
  static final int XATTR_CREATE = 1;
  static final int XATTR_REPLACE = 2;
  /** Linux's XATTR_SIZE_MAX. */
  static final int MAX_VALUE = 65536;

  private final Ctx ctx;
  private final Lookups lookups;

  Xattrs(Ctx ctx, Lookups lookups) {
    this.ctx = ctx;
    this.lookups = lookups;
  }

  byte[] get(long ino, String name) throws FsException {
    checkName(name);
    byte[] v = all(ino).get(name);
    if (v == null) {
      throw new FsException(Errno.ENODATA, "no xattr " + name + " on " + ino);
    }
    return v.clone();
  }

  List<String> list(long ino) throws FsException {
    return new ArrayList<>(all(ino).keySet());
  }

  private Map<String, byte[]> all(long ino) throws FsException {
    lookups.inode(ino);
    return ctx.cache.group(MetaCache.xattrsSlot(ino), () -> load(ino));
  }

  private Map<String, byte[]> load(long ino) {
    byte[] p = ctx.keys.xattrPrefix(ino);
    Map<String, byte[]> out = new TreeMap<>();
    int skip = new String(p, java.nio.charset.StandardCharsets.UTF_8).length();
    for (KeyValue kv : ctx.store.range(p, Keys.prefixEnd(p), 0).kvs()) {
      out.put(kv.keyString().substring(skip), kv.value());
    }
    return java.util.Collections.unmodifiableMap(out);
  }

  void set(long ino, String name, byte[] value, int flags, Caller caller) throws FsException {
    checkName(name);
    checkWrite(name, caller);
    if (value.length > MAX_VALUE) {
      throw new FsException(Errno.E2BIG, "xattr value larger than 64 KiB");
    }
    change(ino, name, tx -> {
      boolean exists = tx.get(ctx.keys.xattr(ino, name)).isPresent();
      if (exists && (flags & XATTR_CREATE) != 0) {
        throw new FsException(Errno.EEXIST, "xattr " + name + " exists on " + ino);
      }
      if (!exists && (flags & XATTR_REPLACE) != 0) {
        throw new FsException(Errno.ENODATA, "no xattr " + name + " on " + ino);
      }
      tx.put(ctx.keys.xattr(ino, name), value);
    });
  }

  void remove(long ino, String name, Caller caller) throws FsException {
    checkName(name);
    checkWrite(name, caller);
    change(ino, name, tx -> {
      if (tx.get(ctx.keys.xattr(ino, name)).isEmpty()) {
        throw new FsException(Errno.ENODATA, "no xattr " + name + " on " + ino);
      }
      tx.delete(ctx.keys.xattr(ino, name));
    });
  }

  private interface Edit {
    void apply(io.etcfs.core.fs.tx.MetaTx tx) throws FsException;
  }

  /** An xattr change is a status change: the inode's ctime moves in the same transaction. */
  private void change(long ino, String name, Edit edit) throws FsException {
    ctx.tx.run("xattr " + name + " of " + ino, tx -> {
      Inode i = Records.inode(tx.get(ctx.keys.inode(ino)), ino);
      edit.apply(tx);
      tx.put(ctx.keys.inode(ino), Codec.inode(i.withCtime(Ctx.now())));
      return null;
    });
    ctx.cache.invalidateGroup(MetaCache.xattrsSlot(ino));
  }

  private static void checkName(String name) throws FsException {
    boolean known = name.startsWith("user.") || name.startsWith("trusted.")
        || name.startsWith("security.");
    if (!known) {
      throw new FsException(Errno.EOPNOTSUPP, "xattr namespace of " + name + " not supported");
    }
    if (name.length() > 255 || name.indexOf('\0') >= 0 || name.endsWith(".")) {
      throw new FsException(Errno.ERANGE, "bad xattr name " + name);
    }
  }

  private static void checkWrite(String name, Caller caller) throws FsException {
    if (name.startsWith("trusted.") && !caller.isRoot()) {
      throw new FsException(Errno.EPERM, "trusted xattrs are root's");
    }
  }
}
