package io.etcfs.core.fs;

import io.etcfs.core.fs.cache.MetaCache;
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
 * readdir. A directory of up to {@link #LISTING_LIMIT} entries is read whole with one range read
 * and kept in the metadata cache as a group (its listing), which any watch event under the
 * directory's entries drops: listing it again costs no round trip, and a listing is exactly as
 * current as a lookup is — it shows a name another node created once this node's watch has
 * shown the create, and this node's own changes at once (a commit waits for the watch to show
 * it). A larger directory is listed in pages of range reads with a limit, so a directory of any
 * size is listed in bounded requests. The cookie of an entry is its name hash (its key's hash
 * part), so a listing resumes exactly after it whatever changed meanwhile; entries that share
 * a hash are never split across pages, since a cookie could not tell them apart.
 */
final class DirReader {
  /** The most entries a directory's cached listing holds; larger ones are read in pages. */
  static final int LISTING_LIMIT = 1000;
  /** The most subdirectories of a page whose listings are read ahead, in one transaction. */
  static final int AHEAD_DIRS = 24;
  /**
   * The most entries a listing read ahead may have (a larger directory is read when listed):
   * bounds the transaction's answer to well under etcd's and gRPC's message limits.
   */
  static final int AHEAD_ENTRIES = 200;

  /** A directory's entries in key order, or {@code null} entries if it has too many. */
  private record Listing(List<DirEntry> entries) {}

  /**
   * The most listings one listing's read-ahead reads further down, in the background (see {@link
   * #readAhead}): a walk finds the next levels cached instead of paying a round trip at each
   * directory that has subdirectories.
   */
  static final int DEEPER_DIRS = 8 * AHEAD_DIRS;

  /** How many directories {@link #listedAfter} remembers the listing order of. */
  static final int LISTED_KEPT = 4096;

  private final Ctx ctx;
  private final Lookups lookups;
  /** Directories listed from the start, by when (a counter), the latest listing of each. */
  private final java.util.concurrent.ConcurrentSkipListMap<Long, Long> listedOrder =
      new java.util.concurrent.ConcurrentSkipListMap<>();
  private final java.util.Map<Long, Long> listedAt =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong listings =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * Reads listings further down a tree than a listing's own subdirectories, one walk at a time:
   * a walk already running makes another's start redundant (its listings are being read), so
   * one waiting is enough and later ones are dropped.
   */
  private final java.util.concurrent.ThreadPoolExecutor deeper =
      new java.util.concurrent.ThreadPoolExecutor(1, 1, 0, java.util.concurrent.TimeUnit.SECONDS,
          new java.util.concurrent.ArrayBlockingQueue<>(1), r -> {
            Thread t = new Thread(r, "etcfs-listings-ahead");
            t.setDaemon(true);
            return t;
          }, new java.util.concurrent.ThreadPoolExecutor.DiscardPolicy());

  DirReader(Ctx ctx, Lookups lookups) {
    this.ctx = ctx;
    this.lookups = lookups;
  }

  /** Stops reading ahead in the background. */
  void close() {
    deeper.shutdownNow();
  }

  DirPage readdir(long dir, long cookie, int max) throws FsException {
    Inode d = lookups.inode(dir);
    Names.requireDir(d);
    if (cookie == Long.MAX_VALUE || max <= 0) {
      return new DirPage(List.of(), cookie != Long.MAX_VALUE);
    }
    if (cookie == 0) {
      listed(dir);
    }
    Listing l = ctx.cache.isLive()
        ? ctx.cache.group(MetaCache.listingSlot(dir), () -> load(dir)) : null;
    if (l != null && l.entries() != null) {
      DirPage p = page(l.entries(), cookie, max);
      readAhead(p.entries());
      return p;
    }
    byte[] from = cookie == 0 ? ctx.keys.direntPrefix(dir) : ctx.keys.direntFrom(dir, cookie + 1);
    RangeResult r = ctx.store.range(from, lookups.direntEnd(dir), max + 1);
    List<DirEntry> entries = entries(dir, r);
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

  /**
   * The directory's entries as this node's cache holds them, if it holds a whole listing, without
   * reading anything: for hints (which files a reader may open next), never for a decision.
   */
  List<DirEntry> cachedListing(long dir) {
    return ctx.cache.peekGroup(MetaCache.listingSlot(dir)) instanceof Listing l ? l.entries()
        : null;
  }

  /**
   * The directories listed from the start after {@code dir} last was, in the order they were
   * (up to {@link #LISTED_KEPT} remembered); none if it was not listed recently. A walk lists a
   * directory shortly before it opens its files ({@code find | xargs sha256sum}, {@code tar c},
   * {@code cp -r}), so this is the order of the files a reader opens after {@code dir}'s: a hint
   * for {@link ReadAhead}, never for a decision.
   */
  Iterable<Long> listedAfter(long dir) {
    Long at = listedAt.get(dir);
    return at == null ? List.of() : listedOrder.tailMap(at, false).values();
  }

  private void listed(long dir) {
    long now = listings.incrementAndGet();
    Long before = listedAt.put(dir, now);
    if (before != null) {
      listedOrder.remove(before);
    }
    listedOrder.put(now, dir);
    while (listedAt.size() > LISTED_KEPT) {
      var oldest = listedOrder.pollFirstEntry();
      if (oldest == null) {
        break;
      }
      listedAt.remove(oldest.getValue(), oldest.getKey());
    }
  }

  /**
   * Caches the listings of the subdirectories in {@code entries} that are not cached, up to
   * {@link #AHEAD_DIRS}, read in one read-only transaction (all at one revision): a walk of a
   * tree ({@code find}, {@code git status}, {@code du}, {@code rm -rf}) lists them next, and each
   * cost a round trip of its own. Then, in the background, the levels below them, breadth first,
   * up to {@link #DEEPER_DIRS} listings: without that, each directory of the walk that has
   * subdirectories paid this read-ahead's round trip when it was listed. Each listing is kept as
   * {@link #load} keeps one, unless its slot was dropped since before the read (an event under
   * it: it is read again when listed), and its names are the metadata cache's too, complete (a
   * look-up of a name it lacks, such as git's of every directory's .gitignore, needs no read).
   * A hint: a failure reads nothing ahead.
   */
  private void readAhead(List<DirEntry> entries) {
    if (!ctx.cache.isLive()) {
      return;
    }
    List<Long> dirs = new ArrayList<>();
    uncachedSubdirs(entries, dirs, AHEAD_DIRS);
    if (dirs.isEmpty()) {
      return;
    }
    List<Long> read = readListings(dirs);
    if (!read.isEmpty()) {
      deeper.execute(() -> readBelow(read));
    }
  }

  /** Adds to {@code out} the subdirectories in {@code entries} whose listing is not cached. */
  private void uncachedSubdirs(List<DirEntry> entries, List<Long> out, int max) {
    for (DirEntry e : entries) {
      if (out.size() >= max) {
        return;
      }
      if (e.type() == io.etcfs.spi.vfs.Attr.S_IFDIR
          && ctx.cache.peekGroup(MetaCache.listingSlot(e.ino())) == null
          && !out.contains(e.ino())) {
        out.add(e.ino());
      }
    }
  }

  /** The background part of {@link #readAhead}: the levels below {@code read}. */
  private void readBelow(List<Long> read) {
    java.util.ArrayDeque<Long> listed = new java.util.ArrayDeque<>(read);
    int budget = DEEPER_DIRS;
    while (budget > 0 && !listed.isEmpty() && ctx.cache.isLive()
        && !Thread.currentThread().isInterrupted()) {
      List<Long> next = new ArrayList<>();
      while (!listed.isEmpty() && next.size() < Math.min(AHEAD_DIRS, budget)) {
        List<DirEntry> l = cachedListing(listed.poll());
        if (l != null) {
          uncachedSubdirs(l, next, Math.min(AHEAD_DIRS, budget));
        }
      }
      if (next.isEmpty()) {
        continue;
      }
      budget -= next.size();
      listed.addAll(readListings(next));
    }
  }

  /**
   * Reads and caches the listings of {@code dirs} in one read-only transaction; returns those
   * cached (a directory larger than {@link #AHEAD_ENTRIES} is left to be read when listed).
   */
  private List<Long> readListings(List<Long> dirs) {
    long[] epochs = new long[dirs.size()];
    long token = ctx.cache.scopeToken();
    io.etcfs.spi.meta.Txn read = new io.etcfs.spi.meta.Txn();
    for (int i = 0; i < dirs.size(); i++) {
      long d = dirs.get(i);
      epochs[i] = ctx.cache.groupEpoch(MetaCache.listingSlot(d));
      read.then(new io.etcfs.spi.meta.Op.Range(ctx.keys.direntPrefix(d), lookups.direntEnd(d),
          AHEAD_ENTRIES + 1));
    }
    io.etcfs.spi.meta.TxnResult r;
    try {
      r = ctx.store.commit(read);
    } catch (io.etcfs.spi.meta.NoWait.WouldBlock e) {
      throw e; // the listing is answered where the read ahead may wait
    } catch (RuntimeException e) { // the store's failure (MetaStoreException), or it closed
      return List.of();
    }
    List<Long> cached = new ArrayList<>();
    for (int i = 0; i < dirs.size(); i++) {
      RangeResult one = r.ranges().get(i);
      if (one.more() || one.kvs().size() > AHEAD_ENTRIES) {
        continue;
      }
      try {
        ctx.cache.primeGroup(MetaCache.listingSlot(dirs.get(i)), listing(dirs.get(i), one),
            epochs[i]);
        ctx.cache.completeScope(ctx.keys.direntPrefix(dirs.get(i)), one, token);
        cached.add(dirs.get(i));
      } catch (FsException e) {
        // an entry that does not decode: the directory is read when listed, and says so then
      }
    }
    return cached;
  }

  private Listing listing(long dir, RangeResult r) throws FsException {
    return new Listing(List.copyOf(entries(dir, r)));
  }

  /** The entries a range read of {@code dir}'s keys found, in key order. */
  private List<DirEntry> entries(long dir, RangeResult r) throws FsException {
    List<DirEntry> entries = new ArrayList<>(r.kvs().size());
    for (KeyValue kv : r.kvs()) {
      entries.add(entry(dir, kv));
    }
    return entries;
  }

  /** The whole directory in one read, unless it has more than {@link #LISTING_LIMIT} entries. */
  private Listing load(long dir) throws FsException {
    byte[] from = ctx.keys.direntPrefix(dir);
    long token = ctx.cache.scopeToken();
    RangeResult r = ctx.store.range(from, lookups.direntEnd(dir), LISTING_LIMIT + 1);
    if (r.more() || r.kvs().size() > LISTING_LIMIT) {
      return new Listing(null);
    }
    Listing l = listing(dir, r);
    // the same keys a miss in the directory would read: its look-ups need no read now
    ctx.cache.completeScope(from, r, token);
    return l;
  }

  /**
   * The page after {@code cookie} of a listing in key order (hashes in unsigned order), cut as a
   * paged read cuts it: never between entries of one hash.
   */
  static DirPage page(List<DirEntry> all, long cookie, int max) {
    int i = 0;
    if (cookie != 0) {
      // the first entry whose hash is above the cookie
      int lo = 0;
      int hi = all.size();
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (Long.compareUnsigned(all.get(mid).cookie(), cookie) <= 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      i = lo;
    }
    int end = Math.min(all.size(), i + max);
    if (end == all.size()) {
      return new DirPage(List.copyOf(all.subList(i, end)), false);
    }
    long boundary = all.get(end).cookie();
    int cut = end;
    while (cut > i && all.get(cut - 1).cookie() == boundary) {
      cut--;
    }
    if (cut == i) { // one hash fills the page: all of it goes together
      while (end < all.size() && all.get(end).cookie() == boundary) {
        end++;
      }
      return new DirPage(List.copyOf(all.subList(i, end)), true);
    }
    return new DirPage(List.copyOf(all.subList(i, cut)), true);
  }

  /** Every entry of one hash (more than a page share it: astronomically unlikely, but exact). */
  private List<DirEntry> wholeGroup(long dir, long hash) throws FsException {
    return entries(dir, ctx.store.range(ctx.keys.direntFrom(dir, hash),
        ctx.keys.direntFrom(dir, hash + 1), 0));
  }

  private DirEntry entry(long dir, KeyValue kv) throws FsException {
    // d/<dir 16 hex>/<hash 16 hex>/<name>
    String rel = ctx.keys.relative(kv.keyString());
    long hash = Long.parseUnsignedLong(rel.substring(19, 35), 16);
    Codec.Dirent d = Records.dirent(kv);
    return new DirEntry(rel.substring(36), d.ino(), d.type(), hash);
  }
}
