package io.etcfs.fuse.internal;

import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.SetAttr;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * One inode of {@link MemoryVfs}; callers hold the Vfs lock. A directory numbers its entries in
 * insertion order; the readdir cookie of entry {@code seq} is {@code 3 + seq / cookieGroup}, so a
 * group size above 1 makes several entries share a cookie, like names sharing a hash.
 */
final class MemoryNode {
  final long ino;
  int mode;
  int uid;
  int gid;
  int nlink;
  long rdev;
  long size;
  byte[] data = new byte[0];
  long atime;
  long mtime;
  long ctime;
  String target;
  final Map<String, byte[]> xattrs = new LinkedHashMap<>();
  final Map<String, Long> entries = new HashMap<>();
  private final Map<String, Long> seqOf = new HashMap<>();
  private final NavigableMap<Long, String> bySeq = new TreeMap<>();
  private long nextSeq;
  int cookieGroup = 1;

  private MemoryNode(long ino, int mode, Caller caller, int nlink) {
    this.ino = ino;
    this.mode = mode;
    this.uid = caller.uid();
    this.gid = caller.gid();
    this.nlink = nlink;
    this.atime = this.mtime = this.ctime = System.currentTimeMillis() * 1_000_000L;
  }

  static MemoryNode directory(long ino, int mode, Caller caller, Long parent) {
    return new MemoryNode(ino, Attr.S_IFDIR | (mode & 07777), caller, 2);
  }

  static MemoryNode file(long ino, int mode, Caller caller) {
    int type = (mode & Attr.S_IFMT) == 0 ? Attr.S_IFREG : mode & Attr.S_IFMT;
    return new MemoryNode(ino, type | (mode & 07777), caller, 1);
  }

  Attr attr() {
    long length = target != null ? target.length() : size;
    return new Attr(ino, mode, nlink, uid, gid, rdev, length, (size + 511) / 512, atime, mtime,
        ctime);
  }

  void link(String name, long child) {
    entries.put(name, child);
    seqOf.put(name, nextSeq);
    bySeq.put(nextSeq++, name);
  }

  void unlink(String name) {
    entries.remove(name);
    bySeq.remove(seqOf.remove(name));
  }

  private long cookie(long seq) {
    return 3 + seq / cookieGroup;
  }

  /** Entries whose cookie is above {@code cookie}: at least max, never half a cookie group. */
  DirPage page(long cookie, int max) {
    long fromSeq = cookie < 3 ? 0 : (cookie - 3 + 1) * cookieGroup;
    List<DirEntry> page = new ArrayList<>();
    for (Map.Entry<Long, String> e : bySeq.tailMap(fromSeq, true).entrySet()) {
      long c = cookie(e.getKey());
      if (page.size() >= max && c != page.get(page.size() - 1).cookie()) {
        return new DirPage(page, true);
      }
      page.add(new DirEntry(e.getValue(), entries.get(e.getValue()), 0, c));
    }
    return new DirPage(page, false);
  }

  void apply(SetAttr changes) {
    long now = System.currentTimeMillis() * 1_000_000L;
    if (changes.mode() != null) {
      mode = (mode & Attr.S_IFMT) | (changes.mode() & 07777);
    }
    if (changes.uid() != null) {
      uid = changes.uid();
    }
    if (changes.gid() != null) {
      gid = changes.gid();
    }
    if (changes.size() != null) {
      resize(changes.size());
      mtime = now;
    }
    if (changes.atimeNs() != null) {
      atime = changes.atimeNs() == SetAttr.NOW ? now : changes.atimeNs();
    }
    if (changes.mtimeNs() != null) {
      mtime = changes.mtimeNs() == SetAttr.NOW ? now : changes.mtimeNs();
    }
    ctime = now;
  }

  private void resize(long newSize) {
    if (newSize > data.length) {
      data = Arrays.copyOf(data, (int) Math.max(newSize, data.length * 2L));
    } else {
      Arrays.fill(data, (int) newSize, data.length, (byte) 0);
    }
    size = newSize;
  }

  int read(ByteBuffer dst, long offset) {
    if (offset >= size) {
      return 0;
    }
    int n = (int) Math.min(dst.remaining(), size - offset);
    dst.put(data, (int) offset, n);
    return n;
  }

  int write(ByteBuffer src, long offset) {
    int n = src.remaining();
    if (offset + n > data.length) {
      data = Arrays.copyOf(data, (int) Math.max(offset + n, data.length * 2L));
    }
    src.get(data, (int) offset, n);
    size = Math.max(size, offset + n);
    mtime = ctime = System.currentTimeMillis() * 1_000_000L;
    return n;
  }
}
