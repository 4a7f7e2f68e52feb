package io.etcfs.core.fs.meta;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The binary values of the metadata keys. Every value starts with a version byte so that a later
 * format can be read next to this one during a rolling upgrade; decoding checks the version, the
 * lengths and that nothing trails, and throws {@link IllegalArgumentException} naming what is
 * wrong (the caller names the key).
 */
public final class Codec {
  static final byte V1 = 1;
  /** Extents per extent-map key: 64 * 24 bytes keeps a chunk far below etcd's request limit. */
  public static final int EXTENTS_PER_CHUNK = 64;

  private Codec() {}

  public static byte[] inode(Inode i) {
    byte[] t = i.target() == null ? null : i.target().getBytes(StandardCharsets.UTF_8);
    ByteBuffer b = ByteBuffer.allocate(1 + 4 * 4 + 8 * 8 + 4 + (t == null ? 0 : t.length));
    b.put(V1).putLong(i.ino()).putInt(i.mode()).putInt(i.uid()).putInt(i.gid()).putInt(i.nlink());
    b.putLong(i.size()).putLong(i.rdev()).putLong(i.blocks()).putLong(i.parent());
    b.putLong(i.atimeNs()).putLong(i.mtimeNs()).putLong(i.ctimeNs());
    b.putInt(t == null ? -1 : t.length);
    if (t != null) {
      b.put(t);
    }
    return b.array();
  }

  public static Inode decodeInode(byte[] v) {
    return decode(v, "inode", b -> {
      long ino = b.getLong();
      int mode = b.getInt();
      int uid = b.getInt();
      int gid = b.getInt();
      int nlink = b.getInt();
      long size = b.getLong();
      long rdev = b.getLong();
      long blocks = b.getLong();
      long parent = b.getLong();
      long a = b.getLong();
      long m = b.getLong();
      long c = b.getLong();
      int tl = b.getInt();
      if (tl < -1 || tl > b.remaining() || nlink < 0 || size < 0 || blocks < 0) {
        throw new IllegalArgumentException("bad field values");
      }
      String target = null;
      if (tl >= 0) {
        byte[] t = new byte[tl];
        b.get(t);
        target = new String(t, StandardCharsets.UTF_8);
      }
      return new Inode(ino, mode, uid, gid, nlink, size, rdev, blocks, parent, a, m, c, target);
    });
  }

  /** A directory entry's value: the child and its file type (so readdir needs no inode read). */
  public record Dirent(long ino, int type) {}

  public static byte[] dirent(Dirent d) {
    return ByteBuffer.allocate(13).put(V1).putLong(d.ino()).putInt(d.type()).array();
  }

  public static Dirent decodeDirent(byte[] v) {
    return decode(v, "directory entry", b -> new Dirent(b.getLong(), b.getInt()));
  }

  /** The blind-written times of a directory ({@code m/<dir>}). */
  public record DirTimes(long mtimeNs, long ctimeNs) {}

  public static byte[] dirTimes(DirTimes t) {
    return ByteBuffer.allocate(17).put(V1).putLong(t.mtimeNs()).putLong(t.ctimeNs()).array();
  }

  public static DirTimes decodeDirTimes(byte[] v) {
    return decode(v, "directory times", b -> new DirTimes(b.getLong(), b.getLong()));
  }

  public static byte[] extents(List<FileExtent> extents) {
    if (extents.isEmpty() || extents.size() > EXTENTS_PER_CHUNK) {
      throw new IllegalArgumentException("a chunk holds 1 to 64 extents, not " + extents.size());
    }
    ByteBuffer b = ByteBuffer.allocate(1 + 2 + 24 * extents.size());
    b.put(V1).putShort((short) extents.size());
    for (FileExtent e : extents) {
      b.putLong(e.fileBlock()).putLong(e.deviceBlock()).putLong(e.length());
    }
    return b.array();
  }

  public static List<FileExtent> decodeExtents(byte[] v) {
    return decode(v, "extent chunk", b -> {
      int n = b.getShort();
      if (n < 1 || n > EXTENTS_PER_CHUNK) {
        throw new IllegalArgumentException("extent count " + n);
      }
      List<FileExtent> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        FileExtent e = new FileExtent(b.getLong(), b.getLong(), b.getLong());
        if (!out.isEmpty() && out.get(out.size() - 1).fileEnd() > e.fileBlock()) {
          throw new IllegalArgumentException("extents overlap or are out of order");
        }
        out.add(e);
      }
      return out;
    });
  }

  private interface Reader<T> {
    T read(ByteBuffer b);
  }

  private static <T> T decode(byte[] v, String what, Reader<T> reader) {
    if (v.length == 0 || v[0] != V1) {
      throw new IllegalArgumentException(
          "corrupt " + what + ": " + (v.length == 0 ? "empty" : "unknown version " + v[0]));
    }
    ByteBuffer b = ByteBuffer.wrap(v, 1, v.length - 1);
    try {
      T t = reader.read(b);
      if (b.hasRemaining()) {
        throw new IllegalArgumentException(b.remaining() + " trailing bytes");
      }
      return t;
    } catch (BufferUnderflowException e) {
      throw new IllegalArgumentException("corrupt " + what + ": truncated", e);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("corrupt " + what + ": " + e.getMessage(), e);
    }
  }
}
