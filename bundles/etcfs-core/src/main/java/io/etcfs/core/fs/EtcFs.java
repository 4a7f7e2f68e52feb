package io.etcfs.core.fs;

import io.etcfs.core.fs.cache.CacheWatch;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.core.fs.plock.PosixLocks;
import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.blockdev.BlockDevice;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.DirPage;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.PosixLock;
import io.etcfs.spi.vfs.SetAttr;
import io.etcfs.spi.vfs.StatFs;
import io.etcfs.spi.vfs.Vfs;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The filesystem engine of one node: {@link Vfs} on the metadata store, the allocator and the
 * shared device. Every change is one guarded etcd transaction; this node's caches follow every
 * other node's changes through one watch.
 */
public final class EtcFs implements Vfs, AutoCloseable {
  /** The node-wide write-back budget. */
  public static final long DEFAULT_BUFFER_BYTES = 64L << 20;

  final Ctx ctx; // package-private for tests
  private final CacheWatch watch;
  private final Lookups lookups;
  private final DirReader dirs;
  private final Creates creates;
  private final Removes removes;
  private final Renames renames;
  private final AttrChanges attrs;
  private final Xattrs xattrs;
  private final Truncator truncator;
  private final FileOps files;
  private final Flusher flusher;
  private final InodeLocks locks;
  private final PosixLocks posixLocks;
  /** The xattr that publishes a file: {@code setfattr -n user.etcfs.publish FILE}. */
  public static final String PUBLISH = "user.etcfs.publish";
  private final DeadNodeSweep sweep;
  private final Extents extentsOf;
  private final OpenFiles open;
  private final InodePathFinder paths;
  private final Delegations delegations;

  /**
   * Starts the engine: its cache watch runs from here on.
   *
   * @param allocator the allocator bound right now (asked on every use: it can be swapped live)
   */
  public EtcFs(MetaStore store, String fsName, Membership membership,
      Supplier<Allocator> allocator, Supplier<LockService> lockService, BlockDevice device,
      int blockSize, long bufferBytes) {
    this(store, fsName, membership, allocator, lockService, device, blockSize, bufferBytes,
        PosixLocks.DEFAULT_WAIT);
  }

  /**
   * As above, with the bound on a blocking fcntl or flock lock request ({@code lockWait}), past
   * which the caller sees ENOLCK.
   */
  public EtcFs(MetaStore store, String fsName, Membership membership,
      Supplier<Allocator> allocator, Supplier<LockService> lockService, BlockDevice device,
      int blockSize, long bufferBytes, Duration lockWait) {
    this.ctx = new Ctx(store, new FsKeys(fsName), membership, allocator, device, blockSize);
    // Every commit compares the record as it is now: it changes only when the cluster switches
    // its lock backend or allocator (TxRunner#guardStrategy).
    ctx.store.get(ctx.keys.record())
        .ifPresent(kv -> ctx.tx.guardStrategy(ctx.keys.record(), kv.modRevision()));
    this.watch = new CacheWatch(ctx.store, ctx.keys, ctx.cache);
    Extents extents = new Extents(ctx);
    this.extentsOf = extents;
    OpenFiles open = new OpenFiles();
    this.open = open;
    MemoryBudget budget = new MemoryBudget(bufferBytes);
    Purger purger = new Purger(ctx, extents);
    this.locks = new InodeLocks(ctx, lockService, open);
    watch.setListener(events -> {
      ctx.notices.onEvents(events);
      locks.onEvents(events);
    });
    Flusher flusher = new Flusher(ctx, extents, budget, locks);
    this.flusher = flusher;
    locks.setFlusher(flusher);
    this.lookups = new Lookups(ctx);
    this.dirs = new DirReader(ctx, lookups);
    locks.setReadAhead(new ReadAhead(ctx, dirs), extents);
    this.creates = new Creates(ctx, locks);
    this.removes = new Removes(ctx, creates, purger, open);
    this.renames = new Renames(ctx, creates, removes);
    this.attrs = new AttrChanges(ctx);
    this.xattrs = new Xattrs(ctx, lookups);
    this.truncator = new Truncator(ctx, extents, flusher, open, budget, locks);
    DataPath data = new DataPath(ctx, extents, budget, flusher, locks, truncator);
    this.files = new FileOps(ctx, lookups, creates, open, data, flusher, truncator, purger, budget,
        attrs, locks);
    this.posixLocks = new PosixLocks(store, ctx.keys, membership, lockWait);
    this.sweep = new DeadNodeSweep(ctx, purger);
    this.paths = new InodePathFinder(ctx, lookups, dirs);
    this.delegations = new Delegations(ctx, locks, removes, creates, lookups, open, flusher,
        files);
    files.setDelegations(delegations);
    locks.setDelegations(delegations);
    locks.setAwaitCreated(delegations::awaitCreated);
    lookups.setGone(delegations::isGone); // every look-up: by inode and by path
    lookups.setQueued(delegations); // files created or unlinked here, still queued
    extents.setQueued(delegations::inode);
    watch.start();
  }

  /**
   * The filesystem's share of recovering a dead node: purges the inodes it held open after
   * unlinking them and drops empty fcntl/flock tables. Idempotent.
   */
  public String recover(io.etcfs.spi.fencing.DeadNode dead) throws FsException {
    return Calls.run(ctx, "recover " + dead.node(), () -> sweep.recover(dead));
  }

  /**
   * A switch of lock backend or allocator begins here (issue #15): from now on calls that need
   * an inode lock wait at the gate, and a commit that meets the switch's cutover waits for this
   * node to follow it instead of failing ({@code awaitFollow}; not for a node that missed the
   * switch and follows it at once, whose commits under the old backends must fail).
   */
  public void switchStop(boolean awaitFollow) {
    ctx.tx.switching(awaitFollow);
    locks.gate.close();
  }

  /**
   * The drain of a switch, after {@link #switchStop}: every inode lock this node holds is let go
   * as by a recall (kernel write-back, commit, release), so nothing is left to commit under the
   * old backends at the cutover.
   *
   * @throws FsException naming what could not be committed or let go by {@code deadlineNanos}
   */
  public void switchDrain(long deadlineNanos) throws FsException {
    locks.drain(deadlineNanos);
  }

  /** When the gate closed (epoch milliseconds): the start of this node's pause. */
  public long switchStoppedAt() {
    return locks.gate.closedAt();
  }

  /** Whether a switch holds this node's gate closed. */
  public boolean switchStopped() {
    return locks.gate.closed();
  }

  /**
   * The cutover rewrote the filesystem record at {@code recordRevision}, and the new backends are
   * bound: commits compare the new revision (a grant from before commits nothing), and the calls
   * waiting at the gate go on under the new backends.
   */
  public void switchFollow(long recordRevision) throws FsException {
    locks.attachBound();
    ctx.tx.guardStrategy(ctx.keys.record(), recordRevision);
    ctx.tx.switching(false);
    locks.gate.open();
  }

  /** The switch rolled back: the gate opens on the backends this node never left. */
  public void switchAbort() {
    ctx.tx.switching(false);
    locks.gate.open();
  }

  /** The revision of the filesystem record this node runs under (its backends). */
  public long strategyRevision() {
    return ctx.tx.strategyRevision();
  }

  /** The POSIX-lock lease, while held (shell {@code leases}). */
  public List<io.etcfs.spi.lease.LeaseReport.Lease> leases() {
    return posixLocks.leases();
  }

  /** This node's counters (shell {@code stats}). */
  public Stats stats() {
    return ctx.stats;
  }

  /** Whether this node's metadata cache has applied {@code revision}, waiting up to the timeout. */
  boolean cacheReached(long revision, long timeoutMs) {
    return ctx.cache.awaitRevision(revision, timeoutMs);
  }

  /** Whether this node queues unlinks in {@code dir} now, under its delegation (for tests). */
  boolean delegated(long dir) {
    return delegations.queuing(dir);
  }

  /** Key look-ups answered by the metadata cache, and those that went to etcd. */
  public record CacheCounts(long hits, long misses) {}

  public CacheCounts cacheCounts() {
    return new CacheCounts(ctx.cache.hits(), ctx.cache.misses());
  }

  /**
   * The inodes this node is working on: open here, or under an inode lock it holds (shell
   * completion of inode numbers), in ascending order.
   */
  public java.util.SortedSet<Long> activeInodes() {
    java.util.SortedSet<Long> inos = new java.util.TreeSet<>(locks.heldInodes());
    open.all().forEach(f -> inos.add(f.ino));
    return inos;
  }

  /**
   * The committed extent map of {@code ino}, read afresh (shell {@code extents}), after this
   * node commits what it buffered of the file: a file just written and closed here has its
   * blocks on the device a moment later (its release commits them), and the operator asking
   * where they are should see them.
   */
  public List<io.etcfs.core.fs.meta.FileExtent> extentMap(long ino) throws FsException {
    return Calls.run(ctx, "extents " + ino, () -> {
      files.commitBuffered(ino);
      return ctx.tx.run("read extents of " + ino, tx -> extentsOf.read(tx, ino).extents());
    });
  }

  /**
   * The inode's path from the root where this node knows it (the name it last saw the inode
   * under, each step checked against the entry as it is now), else empty; never throws. For
   * people only (shell output): with hard links it is one name of several.
   */
  public Optional<String> pathOf(long ino) {
    try {
      return paths.pathOf(ino);
    } catch (FsException | RuntimeException e) {
      return Optional.empty(); // a failed read, a fenced node: the path is just unknown
    }
  }

  /** The inode's fence (spi.fs InodeFence) as this node reads it; empty if none or unreadable. */
  public Optional<io.etcfs.spi.fs.InodeFence> fenceOf(long ino) {
    try {
      return ctx.cache.get(ctx.keys.inodeFence(ino))
          .map(kv -> io.etcfs.spi.fs.InodeFence.decode(kv.value()));
    } catch (RuntimeException e) {
      return Optional.empty(); // a failed read, a fenced node: for people only
    }
  }

  /** Whether this node holds {@code dir}'s whole listing in its cache (tests). */
  boolean listingCached(long dir) {
    return dirs.cachedListing(dir) != null;
  }

  /** Whether the cache watch runs (the cache is dark while it does not). */
  public boolean watching() {
    return watch.running();
  }

  @Override
  public Attr resolve(String path, Caller caller) throws FsException {
    // each directory as a lookup's: another node's delegation of it commits its queue first
    return Calls.run(ctx, "resolve " + path, () -> {
      long since = ctx.settles.get();
      return current(lookups.resolve(path, locks::beforeAttributes), since);
    });
  }

  /**
   * The attributes as they are now anywhere: this node's buffered writes added, and a writer
   * elsewhere recalled first unless it declared itself clean (its buffered size and times
   * committed) — a stat or lseek(SEEK_END) on this node sees what another node's write() has
   * returned. {@code cached} was read after {@code since} ({@link FileOps#attributes}).
   */
  private Attr current(Attr cached, long since) throws FsException {
    return locks.beforeAttributes(cached.ino()) ? files.attributes(cached.ino())
        : files.attributes(cached, since);
  }

  @Override
  public Attr getattr(long ino) throws FsException {
    return Calls.run(ctx, "getattr " + ino, () -> {
      long since = ctx.settles.get();
      return current(lookups.getattr(ino), since);
    });
  }

  @Override
  public Attr lookup(long dir, String name, Caller caller) throws FsException {
    // As current as a getattr: the kernel may use a lookup's attributes for a stat (for the
    // rest of the jiffy even with an attribute timeout of 0).
    return Calls.run(ctx, "lookup " + name, () -> {
      locks.beforeAttributes(dir); // another node's delegation of it: its queue commits first
      long since = ctx.settles.get();
      return current(lookups.lookup(dir, name), since);
    });
  }

  @Override
  public Attr mknod(long dir, String name, int mode, long rdev, Caller caller)
      throws FsException {
    return Calls.run(ctx, "mknod " + name, () -> {
      delegations.before(dir);
      return creates.mknod(dir, name, mode, rdev, caller);
    });
  }

  @Override
  public Attr mkdir(long dir, String name, int mode, Caller caller) throws FsException {
    return Calls.run(ctx, "mkdir " + name, () -> {
      if (delegations.mayMakeDirectoryBeside(dir, name)) {
        locks.beforeAttributes(dir); // another node's delegation of it: its queue commits first
      } else {
        delegations.before(dir);
      }
      Attr made = creates.mkdir(dir, name, mode, caller);
      delegations.madeDirectory(made.ino());
      return made;
    });
  }

  @Override
  public Attr symlink(long dir, String name, String target, Caller caller) throws FsException {
    return Calls.run(ctx, "symlink " + name, () -> {
      delegations.before(dir);
      return creates.symlink(dir, name, target, caller);
    });
  }

  @Override
  public Attr link(long ino, long dir, String name, Caller caller) throws FsException {
    return Calls.run(ctx, "link " + name, () -> {
      long since = ctx.settles.get();
      Attr queued = delegations.queueLink(ino, dir, name);
      if (queued != null) {
        return files.attributes(queued, since); // the queued create makes this name too
      }
      delegations.awaitCreated(ino);
      delegations.before(dir);
      return creates.link(ino, dir, name, caller);
    });
  }

  @Override
  public void unlink(long dir, String name, Caller caller) throws FsException {
    Calls.run(ctx, "unlink " + name, () -> {
      if (delegations.queueUnlink(dir, name, caller)) {
        return; // committed in the background, under the directory's delegation
      }
      delegations.before(dir);
      removes.unlink(dir, name, caller);
      delegations.changed(dir);
    });
  }

  @Override
  public void rmdir(long dir, String name, Caller caller) throws FsException {
    Calls.run(ctx, "rmdir " + name, () -> {
      delegations.before(dir);
      settleChild(dir, name); // unlinks queued in the directory removed: it must be empty
      removes.rmdir(dir, name, caller);
    });
  }

  @Override
  public void rename(long fromDir, String from, long toDir, String to, Caller caller)
      throws FsException {
    Calls.run(ctx, "rename " + from, () -> {
      if (fromDir == toDir && delegations.queueRename(fromDir, from, to, caller)) {
        return; // the queued create makes the new name instead
      }
      delegations.before(fromDir);
      if (toDir != fromDir) {
        delegations.before(toDir);
      }
      settleChild(toDir, to); // a directory replaced must be empty
      renames.rename(fromDir, from, toDir, to, caller);
    });
  }

  /** Before {@code name} in {@code dir} is removed or replaced: what is queued in it commits. */
  private void settleChild(long dir, String name) throws FsException {
    if (!name.equals(".") && !name.equals("..")) {
      Optional<io.etcfs.core.fs.meta.Codec.Dirent> child = lookups.entry(dir, name);
      if (child.isPresent()) {
        delegations.settle(child.get().ino());
      }
    }
  }

  @Override
  public String readlink(long ino) throws FsException {
    return Calls.run(ctx, "readlink " + ino, () -> lookups.readlink(ino));
  }

  @Override
  public Attr setattr(long ino, SetAttr c, Caller caller) throws FsException {
    return Calls.run(ctx, "setattr " + ino, () -> {
      if (c.size() != null) {
        delegations.awaitCreated(ino);
        truncator.truncate(ino, c.size());
        attrs.afterDataChange(ino, caller);
      }
      boolean more = c.mode() != null || c.uid() != null || c.gid() != null
          || c.atimeNs() != null || c.mtimeNs() != null;
      if (!more) {
        return files.attributes(ino);
      }
      Attr buffered = files.setattrBuffered(ino, c, caller);
      if (buffered == null) {
        buffered = delegations.queueSetattr(ino, c, caller); // a directory delegated here
      }
      if (buffered != null) {
        return buffered;
      }
      delegations.awaitCreated(ino); // committed at once: the file must be in etcd
      // A directory's queue first: its creates' blind time writes must not land after an
      // explicit utimens (tar restores a directory's times after filling it).
      delegations.settle(ino);
      // Committed at once, after what this node buffered (a buffered change must not be
      // committed over this one later).
      files.commitBuffered(ino);
      if (c.atimeNs() != null || c.mtimeNs() != null) {
        if (lookups.getattr(ino).isRegular()) {
          return files.withBuffered(timesAsWriter(ino, c, caller));
        }
        locks.beforeAttributes(ino); // a directory's times: see timesAsWriter for a file's
      }
      return files.withBuffered(attrs.apply(ino, c, caller));
    });
  }

  /** How many times a setattr of a file's times asks again for a lock recalled meanwhile. */
  private static final int TIMES_ATTEMPTS = 8;

  /**
   * A file's explicit times, set under its exclusive lock and committed through its fence, as a
   * writer commits. An explicit time wins over the implicit one of data written before it (tar,
   * cp -p and rsync -a set times before close): the grant recalls the node that buffered that
   * data, which commits it first, so no later commit stamps its own time over this one. (Asking
   * only when the cache or the lock view showed a writer trailed its fence by the watch's delay:
   * under load a utimens on node2 went in before node1's buffered write, whose commit at close
   * then put its own time back.) The commit declares the lock clean — nothing is buffered under
   * it here — so other nodes state the file from their caches once the watch brings it; the
   * recall, and the fence naming this node, make them read it afresh until then.
   */
  private Attr timesAsWriter(long ino, SetAttr c, Caller caller) throws FsException {
    for (int attempt = 1; ; attempt++) {
      io.etcfs.spi.lock.HeldLock lock = locks.hold(ino, io.etcfs.spi.lock.LockMode.EXCLUSIVE);
      try {
        return attrs.apply(ino, c, caller, tx -> {
          locks.fence(tx, ino, true);
          return null;
        });
      } catch (FsException e) {
        if (locks.isCurrent(ino, lock) || attempt == TIMES_ATTEMPTS) {
          throw e;
        }
        // recalled between the grant and the commit: ask again
      }
    }
  }

  @Override
  public DirPage readdir(long dir, long cookie, int max) throws FsException {
    return Calls.run(ctx, "readdir " + dir, () -> {
      delegations.before(dir); // a listing shows no name unlinked here or elsewhere
      return dirs.readdir(dir, cookie, max);
    });
  }

  @Override
  public OpenFile open(long ino, int flags, Caller caller) throws FsException {
    return Calls.run(ctx, "open " + ino, () -> {
      delegations.awaitCreated(ino); // another open of a file created here: its create first
      return files.open(ino, flags, caller);
    });
  }

  @Override
  public OpenFile create(long dir, String name, int mode, int flags, Caller caller)
      throws FsException {
    return Calls.run(ctx, "create " + name, () -> {
      Attr queued = delegations.queueCreate(dir, name, mode, caller);
      if (queued != null) {
        return files.openCreated(queued.ino(), flags, caller); // committed in the background
      }
      delegations.before(dir);
      OpenFile f = files.create(dir, name, mode, flags, caller);
      delegations.changed(dir);
      return f;
    });
  }

  /**
   * Blocks from the allocator. Inode counts are reported as 0, as btrfs does: etcfs has no
   * inode table, inode numbers are 64-bit, and what bounds their number is etcd's space, which
   * no figure here could state truthfully.
   */
  @Override
  public StatFs statfs() throws FsException {
    return Calls.run(ctx, "statfs", () -> {
      delegations.settleAll(); // the space of files unlinked here counts as free
      Allocator a = ctx.allocator();
      return new StatFs(ctx.blockSize, a.totalBlocks(), a.freeBlocks(), 0, 0, NAME_MAX);
    });
  }

  @Override
  public byte[] getxattr(long ino, String name) throws FsException {
    return Calls.run(ctx, "getxattr " + name, () -> xattrs.get(ino, name));
  }

  @Override
  public void setxattr(long ino, String name, byte[] value, int flags, Caller caller)
      throws FsException {
    if (name.equals(PUBLISH)) {
      // Not stored: flushes the file and lets go of its lock now, so a reader elsewhere pays
      // no recall round trip.
      Calls.run(ctx, "publish " + ino, () -> locks.publish(ino));
      return;
    }
    Calls.run(ctx, "setxattr " + name, () -> {
      delegations.awaitCreated(ino);
      delegations.settle(ino); // a directory's queued attribute changes (an ACL sets the mode)
      xattrs.set(ino, name, value, flags, caller);
    });
  }

  @Override
  public List<String> listxattr(long ino) throws FsException {
    return Calls.run(ctx, "listxattr " + ino, () -> xattrs.list(ino));
  }

  @Override
  public void removexattr(long ino, String name, Caller caller) throws FsException {
    Calls.run(ctx, "removexattr " + name, () -> {
      delegations.awaitCreated(ino);
      delegations.settle(ino); // a directory's queued attribute changes (an ACL sets the mode)
      xattrs.remove(ino, name, caller);
    });
  }

  @Override
  public PosixLock getlk(long ino, long owner, PosixLock wanted) throws FsException {
    return Calls.run(ctx, "getlk " + ino, () -> posixLocks.getlk(ino, owner, wanted));
  }

  @Override
  public void setlk(long ino, long owner, PosixLock lock, boolean wait,
      BooleanSupplier interrupted) throws FsException {
    Calls.run(ctx, "setlk " + ino, () -> posixLocks.setlk(ino, owner, lock, wait, interrupted));
  }

  @Override
  public void flock(long ino, long owner, int op, BooleanSupplier interrupted)
      throws FsException {
    Calls.run(ctx, "flock " + ino, () -> posixLocks.flock(ino, owner, op, interrupted));
  }

  @Override
  public void close() {
    flusher.close();
    dirs.close();
    delegations.close();
    posixLocks.close();
    watch.close();
    ctx.notices.close();
  }

  @Override
  public void setKernelCache(io.etcfs.spi.vfs.KernelCache cache) {
    ctx.notices.setSink(cache);
  }

  @Override
  public long cacheGrant(long ino) {
    return locks.cacheGrant(ino);
  }

  @Override
  public long attributesEpoch() {
    return locks.attributesEpoch();
  }

  @Override
  public boolean attributesCacheable(long ino) {
    return locks.attributesCacheable(ino);
  }
}
