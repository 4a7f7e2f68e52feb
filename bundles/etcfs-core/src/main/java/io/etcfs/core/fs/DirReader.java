package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.vfs.DirEntry;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.FsException;
import java.util.ArrayList;
import java.util.List;

/**
 * readdir in pages of range reads with a limit, so a directory of any size is listed in bounded
 * requests. The cookie of an entry is its name hash (its key's hash part), so a listing resumes
 * exactly after it whatever changed meanwhile; entries that share a hash are never split across
 * pages, since a cookie could not tell them apart.
 */
final class DirReader {
  private final Ctx ctx;
  private final Lookups lookups;

  DirReader(Ctx ctx, Lookups lookups) {
    this.ctx = ctx;
    this.lookups = lookups;
  }

  DirPage readdir(long dir, long cookie, int max) throws FsException {
    Inode d = lookups.inode(dir);
    Names.requireDir(d);
    if (cookie == Long.MAX_VALUE || max <= 0) {
      return new DirPage(List.of(), cookie != Long.MAX_VALUE);
    }
    byte[] from = cookie == 0 ? ctx.keys.direntPrefix(dir) : ctx.keys.direntFrom(dir, cookie + 1);
    RangeResult r = ctx.store.range(from, lookups.direntEnd(dir), max + 1);
    List<DirEntry> entries = new ArrayList<>();
    for (KeyValue kv : r.kvs()) {
      entries.add(entry(dir, kv));
    }
    if (entries.size() <= max) {
      return new DirPage(entries, false);
    }
    long boundary = entries.get(max).cookie();
    entries.removeIf(e -> e.cookie() == boundary);
    if (entries.isEmpty()) {
      return new DirPage(wholeGroup(dir, boundary), true);
    }
    return new DirPage(entries, true);
  }

  /** Every entry of one hash (more than a page share it: astronomically unlikely, but exact). */
  private List<DirEntry> wholeGroup(long dir, long hash) throws FsException {
    RangeResult r = ctx.store.range(ctx.keys.direntFrom(dir, hash),
        ctx.keys.direntFrom(dir, hash + 1), 0);
    List<DirEntry> out = new ArrayList<>();
    for (KeyValue kv : r.kvs()) {
      out.add(entry(dir, kv));
    }
    return out;
  }

  private DirEntry entry(long dir, KeyValue kv) throws FsException {
    // d/<dir 16 hex>/<hash 16 hex>/<name>
    String rel = ctx.keys.relative(kv.keyString());
    long hash = Long.parseUnsignedLong(rel.substring(19, 35), 16);
    Codec.Dirent d = Records.dirent(kv);
    return new DirEntry(rel.substring(36), d.ino(), d.type(), hash);
  }
}
