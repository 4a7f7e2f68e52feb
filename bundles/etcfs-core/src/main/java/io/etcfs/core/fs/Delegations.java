package io.etcfs.core.fs;

import io.etcfs.core.fs.cache.MetaCache;
import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.core.fs.meta.NameHash;
import io.etcfs.core.fs.tx.OutcomeUnknownException;
import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.vfs.Attr;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.SetAttr;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Directory delegation: a node that removes many names from one directory takes the directory's
 * exclusive inode lock, and while it holds it answers each unlink there at once and commits them
 * in the background, many in one transaction (docs/ARCHITECTURE.md, "Directory delegation").
 *
 * <ul>
 *   <li>Here, a name unlinked but not yet committed is gone at once for every call ({@link
 *       #isGone}); any other change of the directory, a listing or a stat of it, waits for the
 *       queue first ({@link #settle}).
 *   <li>Elsewhere, a node about to read or change the directory sees the exclusive lock in its
 *       lock view and takes the shared lock first ({@link #before}): the recall commits the queue
 *       before the lock goes ({@link #beforeLetGo}), exactly as a file's writer commits its
 *       buffer. A lock on a victim that is recalled commits its directory's queue first too.
 *   <li>Each commit carries the directory lock's guards: a node that lost the lock commits none
 *       of its queued unlinks (the names stay; logged), as a writer that lost its lock commits
 *       none of its buffered data.
 *   <li>Commits run one per directory at a time, and a batch gathers until it is full, until a
 *       caller waits for the queue, or until its oldest change has waited {@link
 *       #LINGER_NANOS}: nobody waits for a queued change, and whoever needs it committed (a
 *       look-up elsewhere, an open or fsync here) has it commit at once.
 *   <li>Creates are queued too ({@link #queueCreate}), and a file closed before its create is
 *       committed has its data carried by that create ({@link #carry}).
 *   <li>So are the directory's own chmod, chown and utimens ({@link #queueSetattr}): tar
 *       restores each directory's owner, mode and times after filling it.
 * </ul>
 *
 * Only what is safe to answer from this node's view is queued: a regular file, symlink or
 * special file with one link, not open here. Anything else goes the synchronous way.
 */
final class Delegations implements Lookups.Queued {
  private static final Logger LOG = Logger.getLogger(Delegations.class.getName());
  /** {@code -Detcfs.dirDelegation=false} (ETCFS_NODE_JAVA_OPTS) turns delegation off. */
  static final boolean ENABLED =
      !"false".equalsIgnoreCase(System.getProperty("etcfs.dirDelegation"));
  /** Synchronous unlinks in one directory within {@link #BURST_NANOS} before it is taken. */
  static final int TAKE_AFTER = 4;
  static final long BURST_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** After another node recalled it: so that two nodes working in one directory do not ping-pong. */
  static final long RETAKE_AFTER_RECALL_NANOS = TimeUnit.SECONDS.toNanos(2);
  /** A delegation nothing was queued under for this long is given back (others stat freely). */
  static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
  /**
   * How long after the grant unlinks still go the synchronous way: other nodes learn of the
   * delegation through their lock watch, which trails the grant by about a millisecond; until
   * theirs shows it, a look-up there would not recall it. (A node whose shared lock the grant
   * recalled knows at once: see {@code InodeLocks.wantedExclusive}.)
   */
  static final long ACTIVATE_NANOS = TimeUnit.MILLISECONDS.toNanos(
      Long.getLong("etcfs.dirDelegation.activateMillis", 50));
  /** Operations one batch may spend of etcd's 128: the rest for the guards. */
  static final int BATCH_OPS = 100;
  static final int BATCH_MAX = 32;
  /**
   * The most unlinks queued in one directory: past it an unlink waits for the queue (the
   * synchronous way), so that a node that dies loses at most this many answered unlinks there.
   */
  static final int QUEUE_MAX = 256;
  /**
   * How long a queued change may wait for others to share its commit. Nobody waits for it (each
   * call was answered), so a batch gathers until it is full, until someone needs the queue
   * committed (a look-up elsewhere recalls the delegation, an open or fsync here waits for a
   * create, statfs), or until its oldest change has waited this long. It bounds what a node that
   * dies loses beyond its last commit, as the queue's length does.
   */
  static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(
      Long.getLong("etcfs.dirDelegation.lingerMillis", 50));
  /** A commit that failed with an unknown outcome is tried again (each unlink checks again). */
  private static final int ATTEMPTS = 3;
  /**
   * How long a caller waits for a queue to commit. Each commit is bounded by etcd's request
   * timeout and ends the queue either way, so this is only a backstop against a stuck commit.
   */
  private static final long SETTLE_MILLIS = 60_000;

  private final Ctx ctx;
  private final InodeLocks locks;
  private final Removes removes;
  private final Creates creates;
  private final Lookups lookups;
  private final OpenFiles open;
  private final Flusher flusher;
  private final FileOps files;
  private final Map<Long, Dir> dirs = new ConcurrentHashMap<>();
  /** Inodes whose unlink is queued, and where. */
  private final Map<Long, Dir> victims = new ConcurrentHashMap<>();
  /** Files whose create is queued, and where; their records (see {@link #queueCreate}). */
  private final Map<Long, Dir> createdIn = new ConcurrentHashMap<>();
  private final Map<Long, Inode> createdInodes = new ConcurrentHashMap<>();
  private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "etcfs-delegation");
    t.setDaemon(true);
    return t;
  });
  private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
      r -> {
        Thread t = new Thread(r, "etcfs-delegation-idle");
        t.setDaemon(true);
        return t;
      });
  private volatile boolean closed;

  /** One directory this node removes names from; guarded by itself. */
  private static final class Dir {
    final long ino;
    /** The directory's exclusive lock, while delegated here. */
    HeldLock lock;
    /** When {@link #lock} was granted. */
    long grantedAt;
    boolean taking;
    boolean givingBack;
    /** Forgotten by the sweep: a caller that still has it looks again. */
    boolean dead;
    final ArrayDeque<Queued> queue = new ArrayDeque<>();
    /** Names queued or in the commit in flight. */
    final Set<String> gone = new HashSet<>();
    /** Files created here whose create is queued or in the commit in flight, by name. */
    final Map<String, Inode> created = new HashMap<>();
    /**
     * Files whose last close here came before their queued create was committed, by inode: the
     * create carries what they buffered, and their release ends after it ({@link #carry}).
     */
    final Map<Long, FileData> released = new HashMap<>();
    /**
     * The directory's own attribute changes queued here, all of them together (each queued
     * change carries the whole of them as they stood then); null when none is queued or in
     * flight. Read without the monitor by every look-up ({@link #pending}).
     */
    volatile PendingAttrs attrs;
    /** How many of the directory's own attribute changes are queued or in flight. */
    int attrsQueued;
    /** Callers waiting for the queue: it commits now rather than gather ({@link #linger}). */
    int waiting;
    int inFlight;
    boolean flushing;
    int burst;
    long burstStart;
    long retakeAfter;
    long lastUse;

    Dir(long ino) {
      this.ino = ino;
      this.burstStart = System.nanoTime();
      this.retakeAfter = burstStart;
    }

    boolean idle() {
      return queue.isEmpty() && inFlight == 0;
    }
  }

  /**
   * An unlink ({@code ino} is the victim), a create ({@code created} is the new file's record,
   * answered already; {@code also} the names linked to it since, in the same directory) or the
   * directory's own attribute change ({@code attrs}: all of them queued up to this one; {@code
   * ino} is the directory, {@code name} null) queued in a directory.
   */
  private record Queued(String name, long ino, Caller caller, Inode created, PendingAttrs attrs,
      long at, List<String> also) {
    Queued(String name, long ino, Caller caller, Inode created) {
      this(name, ino, caller, created, null, System.nanoTime(), List.of());
    }

    /** Every name a queued create makes. */
    List<String> names() {
      List<String> all = new ArrayList<>(also.size() + 1);
      all.add(name);
      all.addAll(also);
      return all;
    }

    /** This create making {@code names} (the first one first), with record {@code now}. */
    Queued named(List<String> names, Inode now) {
      return new Queued(names.get(0), ino, caller, now, attrs, at,
          List.copyOf(names.subList(1, names.size())));
    }

    boolean isUnlink() {
      return created == null && attrs == null;
    }

    boolean isCreate() {
      return created != null;
    }
  }

  Delegations(Ctx ctx, InodeLocks locks, Removes removes, Creates creates, Lookups lookups,
      OpenFiles open, Flusher flusher, FileOps files) {
    this.ctx = ctx;
    this.locks = locks;
    this.removes = removes;
    this.creates = creates;
    this.lookups = lookups;
    this.open = open;
    this.flusher = flusher;
    this.files = files;
    if (ENABLED) {
      sweeper.scheduleWithFixedDelay(this::sweep, 200, 200, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Answers an unlink from the queue if this node holds {@code dir}'s delegation and the victim
   * qualifies; false if the caller must unlink synchronously.
   */
  boolean queueUnlink(long dir, String name, Caller caller) throws FsException {
    Dir d = dirs.get(dir);
    if (d == null) {
      return false;
    }
    synchronized (d) {
      if (closed || !delegated(d) || !room(d)) {
        return false;
      }
      if (d.gone.contains(name)) {
        throw new FsException(Errno.ENOENT, "no '" + name + "' in " + dir);
      }
      Inode made = d.created.get(name);
      if (made != null) {
        // one of two names of a file whose create is still queued (git's temporary object
        // after its link): the create makes one name fewer; else its create first (one
        // transaction cannot write a key twice)
        Queued q = queuedCreate(d, made.ino());
        if (q == null || q.also().isEmpty()) {
          return false;
        }
        Names.checkSticky(lookups.inode(dir), lookups.inode(made.ino()), caller);
        List<String> names = q.names();
        names.remove(name);
        renamed(d, q, names, null);
        return true;
      }
      Optional<Codec.Dirent> e = lookups.entry(dir, name);
      if (e.isEmpty()) {
        return false; // the synchronous unlink says ENOENT, from a fresh read
      }
      Inode victim = lookups.inode(e.get().ino());
      if (victim.isDir() || victim.nlink() != 1 || open.isOpen(victim.ino())) {
        return false;
      }
      Names.checkSticky(lookups.inode(dir), victim, caller);
      d.gone.add(name);
      d.queue.add(new Queued(name, victim.ino(), caller, null));
      victims.put(victim.ino(), d);
      ctx.releasing.begin(victim.ino()); // a write that finds no space waits for it
      ctx.stats.queuedUnlinks.increment();
      entryChanged(d);
      queued(d);
    }
    return true;
  }

  /**
   * Whether {@code d}'s queue has room for one more change, after waiting for its next batch to
   * commit if it is full ({@link #QUEUE_MAX}); under d, still delegated here. A full queue used
   * to send the caller the synchronous way, which first settles the whole queue ({@link
   * #before}): measured, every ~350th unlink of a 2,000-file loop then waited 250–350 ms while
   * 256 queued unlinks committed 16 at a time, 1.4 s of the loop's 2 s. The wait is for part of
   * what that settle waited for, on the same worker, so it adds no dependency the synchronous
   * way did not have; and the queue still never holds more than QUEUE_MAX answered changes.
   * False (the synchronous way) if the delegation went or the node closed meanwhile, or the
   * batch did not commit within SETTLE_MILLIS.
   */
  private boolean room(Dir d) {
    if (d.queue.size() < QUEUE_MAX) {
      return true;
    }
    NoWait.check();
    ctx.stats.queueFullWaits.increment();
    waitFor(d, () -> closed || !delegated(d) || d.queue.size() < QUEUE_MAX);
    return !closed && delegated(d) && d.queue.size() < QUEUE_MAX;
  }

  /** After something was queued in {@code d}: its commits run; under d. */
  private void queued(Dir d) {
    d.lastUse = System.nanoTime();
    if (d.queue.size() >= BATCH_MAX) {
      d.notifyAll(); // a full batch: it commits now
    }
    if (!d.flushing) {
      d.flushing = true;
      try {
        workers.execute(() -> flushLoop(d));
      } catch (RejectedExecutionException closing) {
        d.flushing = false;
      }
    }
  }

  /**
   * Answers the create of regular file {@code name} ({@code open(O_CREAT)}) from the queue if
   * this node holds {@code dir}'s delegation and the name is free in its view; null if the
   * caller must create synchronously (the name exists or is being unlinked here, no delegation,
   * the queue full). The new file is seen here at once (every look-up asks {@link #inode} and
   * {@link #entry}) and this node holds its exclusive lock provisionally ({@link
   * InodeLocks#provisional}): writes and buffered attribute changes go on, and whatever commits
   * the file's data waits for its create first. The batch that commits it also grants the lock.
   */
  Attr queueCreate(long dir, String name, int mode, Caller caller) throws FsException {
    Dir d = dirs.get(dir);
    if (d == null) {
      return null;
    }
    Names.checkNew(name);
    Inode child;
    synchronized (d) {
      // set-ID bits: a write by another user clears them with a commit of its own
      if (closed || (mode & 06000) != 0 || !delegated(d) || !room(d)
          || d.gone.contains(name)
          || d.created.containsKey(name) || lookups.entry(dir, name).isPresent()) {
        return null;
      }
      Inode parent = lookups.inode(dir);
      long ino = ctx.inos.next();
      child = Creates.newInode(parent, dir, ino, Attr.S_IFREG | (mode & 07777), 0, null, caller);
      long slot = MetaCache.xattrsSlot(ino);
      ctx.cache.primeGroup(slot, Map.of(), ctx.cache.groupEpoch(slot)); // a new file has none
      locks.provisional(ino);
      createdInodes.put(ino, child);
      createdIn.put(ino, d);
      d.created.put(name, child);
      d.queue.add(new Queued(name, ino, caller, child));
      ctx.stats.queuedCreates.increment();
      entryChanged(d);
      queued(d);
    }
    ctx.names.remember(child.ino(), dir, name);
    return child.toAttr(ctx.blockSize);
  }

  /**
   * Answers a hard link of {@code ino}, whose create is queued in {@code dir} and not yet in a
   * commit, to the free name {@code name} in that same directory: the create then makes both
   * names, in one transaction. git writes each object as a temporary file, links it to its name
   * and unlinks the temporary ({@link #queueUnlink} takes the name back off the create): no
   * round trip for either. Null if the caller must link the synchronous way (after the create).
   */
  Attr queueLink(long ino, long dir, String name) throws FsException {
    Dir d = createdIn.get(ino);
    if (d == null || d.ino != dir) {
      return null;
    }
    Names.checkNew(name);
    synchronized (d) {
      Queued q = freeFor(d, name) ? queuedCreate(d, ino) : null;
      if (q == null) {
        return null;
      }
      List<String> names = q.names();
      names.add(name);
      return renamed(d, q, names, name).toAttr(ctx.blockSize);
    }
  }

  /**
   * Answers a rename of {@code from} in {@code dir} to the free name {@code to} in the same
   * directory if {@code from} names a file whose create is queued there and not yet in a commit:
   * the create makes the new name instead. False if the caller must rename the synchronous way.
   */
  boolean queueRename(long dir, String from, String to, Caller caller) throws FsException {
    Dir d = dirs.get(dir);
    if (d == null || from.equals(to)) {
      return false;
    }
    Names.checkNew(to);
    synchronized (d) {
      Inode made = d.created.get(from);
      Queued q = made != null && freeFor(d, to) ? queuedCreate(d, made.ino()) : null;
      if (q == null) {
        return false;
      }
      Names.checkSticky(lookups.inode(dir), lookups.inode(made.ino()), caller);
      List<String> names = q.names();
      names.set(names.indexOf(from), to);
      renamed(d, q, names, to);
      return true;
    }
  }

  /**
   * Whether a name may be added to a queued create in {@code d}: delegated here, free in this
   * node's view, and not unlinked in the queue (the create comes before that unlink there);
   * under d.
   */
  private boolean freeFor(Dir d, String name) throws FsException {
    return !closed && delegated(d) && !d.gone.contains(name) && !d.created.containsKey(name)
        && lookups.entry(d.ino, name).isEmpty();
  }

  /** The create of {@code ino} still in {@code d}'s queue (not in a commit), or null; under d. */
  private static Queued queuedCreate(Dir d, long ino) {
    for (Queued q : d.queue) {
      if (q.ino() == ino && q.isCreate()) {
        return q;
      }
    }
    return null;
  }

  /**
   * Replaces queued create {@code q} by one that makes {@code names}: its link count follows,
   * its change time and the directory's modification time move on; {@code added} is the new
   * name, if any. Under d.
   */
  private Inode renamed(Dir d, Queued q, List<String> names, String added) {
    Inode now = q.created().withNlink(names.size()).withCtime(Ctx.now());
    Queued changed = q.named(names, now);
    List<Queued> all = new ArrayList<>(d.queue);
    all.set(all.indexOf(q), changed);
    d.queue.clear();
    d.queue.addAll(all);
    createdInodes.put(q.ino(), now);
    q.names().forEach(d.created::remove);
    for (String n : names) {
      d.created.put(n, now);
    }
    ctx.names.remember(q.ino(), d.ino, added != null ? added : names.get(0));
    ctx.stats.queuedLinks.increment();
    entryChanged(d);
    queued(d);
    return now;
  }

  /**
   * Answers a chmod, chown or utimens of directory {@code dir} itself from its queue if this node
   * holds its delegation; null if the caller must commit it at once. Checked against this node's
   * view (EPERM as the synchronous way would say), seen here at once ({@link #pending}), and
   * committed in queue order with the creates and unlinks around it: an explicit modification
   * time stands over the entries changed before it, and an entry changed after it moves it on.
   * Other nodes see it as they see the queue: their look-up or stat recalls the delegation.
   */
  Attr queueSetattr(long dir, SetAttr c, Caller caller) throws FsException {
    Dir d = dirs.get(dir);
    if (d == null || c.size() != null) {
      return null;
    }
    synchronized (d) {
      if (closed || !delegated(d) || !room(d)) {
        return null;
      }
      Inode view = lookups.inode(dir); // with what is queued already
      if (!view.isDir()) {
        return null;
      }
      Inode done = AttrChanges.changed(view, c, caller, Ctx.now());
      d.attrs = PendingAttrs.after(done, c, d.attrs);
      d.attrsQueued++;
      d.queue.add(new Queued(null, dir, caller, null, d.attrs, System.nanoTime(), List.of()));
      ctx.stats.queuedSetattrs.increment();
      queued(d);
      return done.toAttr(ctx.blockSize);
    }
  }

  /**
   * After an entry of {@code d} was queued: its own modification time is the commit's, not one
   * set explicitly before it (as a write after utimens moves a file's on); under d.
   */
  private static void entryChanged(Dir d) {
    PendingAttrs a = d.attrs;
    if (a != null) {
      d.attrs = a.afterWrite();
    }
  }

  /** {@code dir} with its own attribute changes queued here on top (every look-up). */
  @Override
  public Inode pending(Inode dir) {
    Dir d = dirs.get(dir.ino());
    PendingAttrs a = d == null ? null : d.attrs;
    return a == null ? dir : a.applyTo(dir);
  }

  /** Whether the unlink of {@code ino} is queued here (every look-up by inode: ENOENT). */
  @Override
  public boolean unlinked(long ino) {
    return victims.containsKey(ino);
  }

  /** The record of {@code ino} if its create is queued here, else null (every look-up). */
  @Override
  public Inode inode(long ino) {
    return createdInodes.get(ino);
  }

  /** The entry of {@code name} in {@code dir} if its create is queued here, else null. */
  @Override
  public Codec.Dirent entry(long dir, String name) {
    Dir d = dirs.get(dir);
    if (d == null) {
      return null;
    }
    synchronized (d) {
      Inode c = d.created.get(name);
      return c == null ? null : new Codec.Dirent(c.ino(), c.type());
    }
  }

  /**
   * Waits until the create of {@code ino} queued here, if any, has committed or was lost: what
   * needs the file in etcd (a commit of its data, a change committed at once, a read of its
   * extents, a hard link) runs after it.
   */
  void awaitCreated(long ino) {
    Dir d = createdIn.get(ino);
    if (d != null) {
      waitFor(d, () -> createdIn.get(ino) != d);
    }
  }

  /** Whether the create of {@code ino} is queued here or in the commit in flight. */
  boolean createQueued(long ino) {
    return createdIn.containsKey(ino);
  }

  /**
   * At the last close of {@code f}, whose create is queued here and not yet in a commit, with
   * its buffer written ahead ({@link Flusher#writeAheadForCreate}), under f's lock: the create
   * will carry the buffer — data, size and attribute changes committed in the transaction that
   * makes the file, with its lock granted clean — and the release ends once that commit is done
   * ({@link FileOps#finishDeferred}). False if the create is in a commit already (or none is
   * queued): the caller releases as usual, after it.
   */
  boolean carry(FileData f) {
    Dir d = createdIn.get(f.ino);
    if (d == null) {
      return false;
    }
    synchronized (d) {
      if (closed || d.released.containsKey(f.ino)
          || d.queue.stream().noneMatch(q -> q.ino() == f.ino && q.isCreate())) {
        return false;
      }
      d.released.put(f.ino, f);
      return true;
    }
  }

  /**
   * After a synchronous unlink or create in {@code dir}: a burst of them takes the delegation.
   */
  void changed(long dir) {
    if (!ENABLED || closed) {
      return;
    }
    Dir d;
    while (true) {
      d = dirs.computeIfAbsent(dir, Dir::new);
      synchronized (d) {
        if (d.dead) {
          continue;
        }
        long now = System.nanoTime();
        if (d.lock != null || d.taking || now - d.retakeAfter < 0) {
          return;
        }
        if (now - d.burstStart > BURST_NANOS) {
          d.burstStart = now;
          d.burst = 0;
        }
        if (++d.burst < TAKE_AFTER) {
          return;
        }
        d.taking = true;
      }
      break;
    }
    Dir taken = d;
    try {
      workers.execute(() -> take(taken));
    } catch (RejectedExecutionException closing) {
      synchronized (d) {
        d.taking = false;
      }
    }
  }

  /**
   * After this node made directory {@code dir} with its exclusive lock granted in the same
   * transaction: delegated here at once. No activation wait: no other node can know the
   * directory without its lock, since a node's lock view is made as new as every lock change its
   * cache shows before it trusts a look-up (InodeLocks#beforeAttributes), and the mkdir that
   * shows the entry wrote the lock. Given back when idle, or to the first node that looks in.
   */
  void madeDirectory(long dir) {
    HeldLock lock = locks.heldExclusive(dir);
    if (!ENABLED || closed || lock == null) {
      return;
    }
    Dir d = dirs.computeIfAbsent(dir, Dir::new);
    synchronized (d) {
      if (d.dead || d.lock != null || d.taking) {
        return;
      }
      long now = System.nanoTime();
      d.lock = lock;
      d.grantedAt = now - ACTIVATE_NANOS;
      d.lastUse = now;
    }
    ctx.stats.delegations.increment();
  }

  private void take(Dir d) {
    HeldLock lock = null;
    try {
      lock = locks.hold(d.ino, LockMode.EXCLUSIVE);
      // Changes are queued under it from now on: its fence says so before the first (the
      // directory's attributes are then read elsewhere under a recall, not from a cache).
      if (!locks.dirty(lock)) {
        lock = null;
      }
    } catch (FsException | RuntimeException e) {
      LOG.log(Level.FINE, "directory " + d.ino + " not delegated: " + e.getMessage());
    }
    synchronized (d) {
      d.taking = false;
      long now = System.nanoTime();
      if (lock == null || closed) {
        d.retakeAfter = now + RETAKE_AFTER_RECALL_NANOS;
        return;
      }
      d.lock = lock;
      d.grantedAt = now;
      d.lastUse = now;
      d.burst = 0;
    }
    ctx.stats.delegations.increment();
  }

  /** Whether unlinks in {@code dir} are queued here now (for tests). */
  boolean queuing(long dir) {
    Dir d = dirs.get(dir);
    if (d == null) {
      return false;
    }
    synchronized (d) {
      return delegated(d);
    }
  }

  /** Whether {@code d}'s delegation is held here, current, and past its activation; under d. */
  private boolean delegated(Dir d) {
    return d.lock != null && locks.isCurrent(d.ino, d.lock)
        && System.nanoTime() - d.grantedAt >= ACTIVATE_NANOS;
  }

  /**
   * Whether a directory made as {@code name} in {@code dir} may commit before what is queued
   * there (its own transaction, at once), instead of after it ({@link #before}): it touches
   * none of the queued names (the directory is delegated here, so no other node changes them,
   * and the kernel holds the directory's lock, so no other call here does), the parent's queued
   * creates and unlinks only put and delete their own entries, and the parent's link count that
   * it raises is read under a compare by both. Not when an unlink of {@code name} is queued (the
   * entry is still in etcd: the make must follow it), a create of it is (EEXIST comes from
   * etcd), or the directory's own attribute changes are (an explicit mtime before the mkdir
   * must not land after it). tar x makes a directory in one it is filling: this is one round
   * trip of its two.
   */
  boolean mayMakeDirectoryBeside(long dir, String name) {
    Dir d = dirs.get(dir);
    if (d == null) {
      return true; // nothing queued there
    }
    synchronized (d) {
      if (d.idle()) {
        return true;
      }
      return !d.dead && !d.gone.contains(name) && !d.created.containsKey(name)
          && d.attrsQueued == 0 && d.attrs == null;
    }
  }

  /** Whether {@code name} in {@code dir} is unlinked here but not committed yet. */
  boolean isGone(long dir, String name) {
    Dir d = dirs.get(dir);
    if (d == null) {
      return false;
    }
    synchronized (d) {
      return d.gone.contains(name);
    }
  }

  /**
   * Before a call reads or changes {@code dir} other than through the queue: this node's queued
   * unlinks there are committed first, and another node's delegation of it is recalled (its
   * queue committed) by taking the shared lock.
   */
  void before(long dir) throws FsException {
    settle(dir);
    locks.beforeAttributes(dir);
  }

  /** Waits until nothing is queued or in flight in {@code dir}. */
  void settle(long dir) throws FsException {
    Dir d = dirs.get(dir);
    if (d != null && !settled(d)) {
      throw new FsException(Errno.EIO, "directory " + dir + ": unlinks queued there did not"
          + " commit within " + SETTLE_MILLIS / 1000 + " s");
    }
  }

  /** {@link #settle} of every directory (statfs, the engine's close). */
  void settleAll() throws FsException {
    for (Long dir : List.copyOf(dirs.keySet())) {
      settle(dir);
    }
  }

  private boolean settled(Dir d) {
    return waitFor(d, d::idle);
  }

  /**
   * Waits on {@code d} until {@code done} (checked under d), at most {@link #SETTLE_MILLIS};
   * returns whether it came.
   */
  private static boolean waitFor(Dir d, java.util.function.BooleanSupplier done) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MILLIS);
    boolean interrupted = false;
    try {
      synchronized (d) {
        if (done.getAsBoolean()) {
          return true;
        }
        d.waiting++;
        d.notifyAll(); // a batch gathering commits now
        try {
          while (!done.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
              return false;
            }
            try {
              TimeUnit.NANOSECONDS.timedWait(d, left);
            } catch (InterruptedException e) {
              interrupted = true; // the queue commits whatever this caller does: wait for it
            }
          }
          return true;
        } finally {
          d.waiting--;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Before this node lets {@code lock} go (a recall, a publish, the idle give-back): if it is a
   * directory's delegation, nothing more is queued under it and what is queued commits now,
   * under the lock; if it is a victim's, its directory's queue commits first, so that whoever
   * takes the victim's lock sees it unlinked.
   */
  void beforeLetGo(HeldLock lock) {
    long ino = lock.inode();
    Dir victimOf = victims.get(ino);
    if (victimOf != null) {
      settled(victimOf);
    }
    Dir d = dirs.get(ino);
    if (d == null) {
      return;
    }
    synchronized (d) {
      if (d.lock == lock) {
        d.lock = null;
        d.retakeAfter = System.nanoTime() + (d.givingBack ? 0 : RETAKE_AFTER_RECALL_NANOS);
      }
    }
    settled(d);
  }

  /** Whether this node holds {@code dir}'s delegation with unlinks not yet committed. */
  boolean busy(long ino) {
    Dir d = dirs.get(ino);
    if (d == null) {
      return false;
    }
    synchronized (d) {
      return !d.idle();
    }
  }

  private void flushLoop(Dir d) {
    while (true) {
      List<Queued> batch = new ArrayList<>();
      Map<Long, FileData> released = new HashMap<>();
      synchronized (d) {
        linger(d);
        if (d.queue.isEmpty()) {
          d.flushing = false;
          d.notifyAll();
          return;
        }
        while (!d.queue.isEmpty() && batch.size() < BATCH_MAX) {
          Queued q = d.queue.poll();
          batch.add(q);
          FileData f = q.isCreate() ? d.released.get(q.ino()) : null;
          if (f != null) {
            released.put(q.ino(), f);
          }
        }
        d.inFlight = batch.size();
      }
      Map<Long, Flusher.Carried> carried = carried(d, released);
      int done;
      FsException lost = null;
      try {
        done = commit(d, batch, carried);
      } catch (FsException | RuntimeException e) {
        // The lock is gone (or etcd refused): nothing of the batch was committed, and nothing
        // of it may be now. The names stay, as a writer's buffer is lost with its lock.
        long made = batch.stream().filter(Queued::isCreate).count();
        long unmade = batch.stream().filter(Queued::isUnlink).count();
        List<String> names = batch.stream().map(Queued::name).filter(n -> n != null).toList();
        LOG.warning("directory " + d.ino + ": " + unmade + " unlinks, " + made + " creates and "
            + (batch.size() - made - unmade) + " changes of its attributes answered here were"
            + " not committed (" + e.getMessage() + "); those names and attributes stay as they"
            + " were: " + names.stream().limit(5).toList() + (names.size() > 5 ? " …" : ""));
        ctx.stats.lostUnlinks.add(unmade);
        ctx.stats.lostCreates.add(made);
        lost = e instanceof FsException fe ? fe : new FsException(Errno.EIO, e.toString());
        done = batch.size();
      }
      List<Queued> finished = batch.subList(0, done);
      // Committed (or lost): look-ups read these files' records from the cache from here on,
      // which has the commit (read-your-writes). Only then is what their creates carried taken
      // out of their buffers, after Ctx#settles moved (a stat meanwhile reads again).
      for (Queued q : finished) {
        if (q.isCreate()) {
          createdInodes.remove(q.ino());
        }
      }
      ctx.settles.incrementAndGet();
      for (Queued q : finished) {
        Flusher.Carried c = carried.get(q.ino());
        if (c != null) {
          FileData f = released.get(q.ino());
          f.lock.lock(); // not under d: a release takes d under its file's lock
          try {
            if (lost == null) {
              Flusher.carriedCommitted(f, c);
            } else if (lost instanceof OutcomeUnknownException) {
              Flusher.forgetCarried(f, c); // perhaps mapped: never given back (see there)
            } // else nothing committed: the release drops the buffer, blocks given back
          } finally {
            f.lock.unlock();
          }
        }
      }
      synchronized (d) {
        for (int i = batch.size() - 1; i >= done; i--) {
          d.queue.addFirst(batch.get(i)); // no room in that transaction: first in the next
        }
        for (Queued q : finished) {
          if (q.attrs() != null) {
            if (--d.attrsQueued == 0) {
              d.attrs = null; // committed (the cache shows them now), or lost
            }
          } else if (q.isUnlink()) {
            d.gone.remove(q.name());
            victims.remove(q.ino(), d);
          } else {
            // adopted with the commit (the real lock replaced it), else the next use asks
            locks.dropProvisional(q.ino());
            q.names().forEach(d.created::remove);
            d.released.remove(q.ino());
            createdIn.remove(q.ino(), d);
          }
        }
        d.notifyAll(); // those waiting for their create go on
      }
      for (Queued q : finished) {
        if (q.isUnlink()) {
          ctx.releasing.end(q.ino());
        } else if (released.containsKey(q.ino())) {
          files.finishDeferred(released.get(q.ino())); // what was not carried commits now
        }
      }
      synchronized (d) {
        // Only now is the queue idle: whoever settles it (statfs, an unlink's check that the
        // file is not open here) finds the carried releases ended too.
        d.inFlight = 0;
        d.notifyAll();
      }
    }
  }

  /**
   * Lets a batch gather while nobody waits for it, until it is full or its oldest change has
   * waited {@link #LINGER_NANOS}; under d.
   */
  private void linger(Dir d) {
    while (!closed && d.waiting == 0 && !d.queue.isEmpty() && d.queue.size() < BATCH_MAX) {
      long left = d.queue.peek().at() + LINGER_NANOS - System.nanoTime();
      if (left <= 0) {
        return;
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(d, left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * What the creates of the files released here carry of their buffers, each read under its
   * file's lock, with their data made durable on the device first (invariant 2: no metadata
   * points at blocks that are not). None if the device cannot: each release then commits its
   * file's data itself, after the create, and reports what fails.
   */
  private Map<Long, Flusher.Carried> carried(Dir d, Map<Long, FileData> released) {
    Map<Long, Flusher.Carried> out = new HashMap<>();
    released.forEach((ino, f) -> {
      f.lock.lock();
      try {
        Flusher.Carried c = flusher.carried(f);
        if (c != null) {
          out.put(ino, c);
        }
      } finally {
        f.lock.unlock();
      }
    });
    if (out.values().stream().anyMatch(c -> !c.pieces().isEmpty())) {
      try {
        ctx.device.flush();
      } catch (java.io.IOException e) {
        LOG.warning("directory " + d.ino + ": device flush before its creates failed (" + e
            + "); their data is committed apart");
        out.clear();
      }
    }
    return out;
  }

  /**
   * Commits the first unlinks and creates of {@code batch} that fit one transaction, each
   * checked again against what the transaction reads (one another node made impossible
   * meanwhile is dropped: its name is gone, or was renamed away); returns how many it took.
   * A create in {@code carried} commits its file's data with it.
   */
  private int commit(Dir d, List<Queued> batch, Map<Long, Flusher.Carried> carried)
      throws FsException {
    int[] taken = {0};
    List<CreateGrant> grants = new ArrayList<>();
    for (int attempt = 1; ; attempt++) {
      try {
        ctx.tx.run("commit " + batch.size() + " names in " + d.ino, tx -> {
          taken[0] = 0;
          grants.clear();
          locks.fence(tx, d.ino, false);
          boolean parentGuarded = false;
          int most = 0;
          for (Queued q : batch) {
            int before = tx.size();
            if (taken[0] > 0 && before + most > BATCH_OPS) {
              break;
            }
            if (q.attrs() != null) {
              attrsIn(tx, d, q);
            } else if (q.isUnlink()) {
              unlinkIn(tx, d, q);
            } else {
              if (!parentGuarded) {
                creates.parent(tx, d.ino, false);
                parentGuarded = true;
              }
              createIn(tx, d, q, carried.get(q.ino()), grants);
            }
            most = Math.max(most, tx.size() - before);
            taken[0]++;
          }
          return null;
        });
        ctx.stats.queuedCommits.increment();
        ctx.stats.carriedCreates.add(batch.subList(0, taken[0]).stream()
            .filter(q -> carried.containsKey(q.ino())).count());
        return taken[0];
      } catch (OutcomeUnknownException e) {
        grants.forEach(locks::abandonCreated); // a committed grant's key goes; asked at first use
        if (attempt >= ATTEMPTS) {
          throw e;
        }
        // Committed or not: the next attempt finds each unlink and create done or still to do.
      }
    }
  }

  /**
   * The directory's own attribute changes in the batch, all of them up to this one applied to
   * its record as read. An explicit modification time folds in and drops the times the entry
   * changes before it wrote blindly (so it stands; those after it in the batch write theirs
   * again); without one they stay, and the later of both shows.
   */
  private void attrsIn(io.etcfs.core.fs.tx.MetaTx tx, Dir d, Queued q) throws FsException {
    byte[] key = ctx.keys.inode(d.ino);
    Inode i = Records.inode(tx.get(key), d.ino);
    if (q.attrs().mtimeNs() != null) {
      i = Lookups.withDirTimes(i, tx.get(ctx.keys.dirTimes(d.ino)));
      tx.delete(ctx.keys.dirTimes(d.ino));
    }
    tx.put(key, Codec.inode(q.attrs().applyTo(i)));
  }

  /** A queued unlink in the batch; one another node made impossible meanwhile is dropped. */
  private void unlinkIn(io.etcfs.core.fs.tx.MetaTx tx, Dir d, Queued q) throws FsException {
    try {
      removes.unlinkIn(tx, d.ino, q.name(), q.caller());
    } catch (FsException e) {
      if (!refused(e)) {
        throw e;
      }
      LOG.info("directory " + d.ino + ": queued unlink of '" + q.name() + "' dropped: "
          + e.getMessage());
    }
  }

  /**
   * A queued create in the batch, with the grant of its lock. Found committed (by an attempt
   * whose outcome was unknown), it is done; its lock is then asked for at its next use. The
   * name taken by another file cannot happen while the delegation holds (every other node's
   * create there recalls it first): if it does anyway, the create is dropped and counted lost.
   */
  private void createIn(io.etcfs.core.fs.tx.MetaTx tx, Dir d, Queued q, Flusher.Carried carried,
      List<CreateGrant> grants) throws FsException {
    long ino = q.ino();
    for (String name : q.names()) {
      Optional<KeyValue> there = tx.get(ctx.keys.dirent(d.ino, NameHash.of(name), name));
      if (there.isPresent()) {
        if (Records.dirent(there.get()).ino() != ino) {
          LOG.warning("directory " + d.ino + ": queued create of " + q.names() + " dropped:"
              + " another file took '" + name + "'; what was written to inode " + ino
              + " is lost");
          ctx.stats.lostCreates.increment();
        }
        return; // else committed by an attempt whose outcome was unknown
      }
    }
    long xattrs = ctx.cache.groupEpoch(MetaCache.xattrsSlot(ino));
    if (carried == null) {
      creates.putNew(tx, d.ino, q.name(), q.created(), xattrs);
    } else {
      creates.putNew(tx, d.ino, q.name(), Flusher.withCarried(q.created(), carried), xattrs,
          flusher.carry(tx, ino, carried));
    }
    for (String name : q.also()) { // linked to it while queued
      tx.put(ctx.keys.dirent(d.ino, NameHash.of(name), name),
          Codec.dirent(new Codec.Dirent(ino, q.created().type())));
    }
    // everything the file holds commits here: its lock may be declared clean from the start
    CreateGrant grant = locks.grantOnCreate(tx, ino, carried != null);
    if (grant != null) {
      grants.add(grant);
    }
  }

  /** What an unlink refuses before it writes anything: the queued one is then dropped. */
  private static boolean refused(FsException e) {
    return e.errno() == Errno.ENOENT || e.errno() == Errno.EISDIR || e.errno() == Errno.EPERM
        || e.errno() == Errno.ENOTDIR;
  }

  /** Gives back delegations nothing was queued under lately; forgets directories gone quiet. */
  private void sweep() {
    long now = System.nanoTime();
    for (Dir d : dirs.values()) {
      boolean giveBack = false;
      synchronized (d) {
        if (d.lock != null && !locks.isCurrent(d.ino, d.lock)) {
          d.lock = null; // lost with its session, or recalled while it was being taken
        }
        if (d.lock != null && d.idle() && now - d.lastUse > IDLE_NANOS) {
          giveBack = true;
          d.givingBack = true;
        } else if (d.lock == null && !d.taking && d.idle() && now - d.burstStart > BURST_NANOS
            && now - d.retakeAfter > 0) {
          d.dead = true;
          dirs.remove(d.ino, d);
        }
      }
      if (giveBack) {
        try {
          locks.publish(d.ino);
        } catch (FsException | RuntimeException e) {
          LOG.log(Level.FINE, "directory " + d.ino + ": delegation not given back: " + e);
        } finally {
          synchronized (d) {
            d.givingBack = false;
          }
        }
      }
    }
  }

  /** Commits what is queued; nothing is queued from here on. */
  void close() {
    closed = true;
    sweeper.shutdownNow();
    for (Dir d : List.copyOf(dirs.values())) {
      settled(d);
    }
    workers.shutdown();
  }
}
