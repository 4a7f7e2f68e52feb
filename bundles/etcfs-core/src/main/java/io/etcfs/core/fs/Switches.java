package io.etcfs.core.fs;

import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchEvent;
import io.etcfs.spi.meta.WatchListener;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.support.switches.SwitchRequests;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * This node's part in a live switch of the cluster's lock backend or allocator (issue #15), and
 * the request that starts one. The protocol (docs/ARCHITECTURE.md, "Switching strategies on a
 * live cluster"), coordinated through etcd only:
 *
 * <ol>
 *   <li>a request {@code switch/request} is put where none is, naming the target and the record
 *       revision it switches from;
 *   <li>every live member prepares the target here ({@link Binder#prepare}), stops taking locks
 *       (the gate), drains what it holds, and answers {@code switch/ack/<node>} {@code ok} or
 *       {@code fail <reason>};
 *   <li>whichever node sees an {@code ok} from every live member commits the cutover: the record
 *       rewritten with the new backends (which is what the strategy guard compares), the request
 *       and answers deleted, the history {@code switches/<epoch>} put — all in one transaction
 *       that compares the request and the record, so it happens once; a {@code fail}, or a
 *       member silent past the deadline, makes any node commit the rollback instead;
 *   <li>each node, seeing the record change, binds the new backends, follows the guard to the new
 *       revision and opens its gate, and records when it resumed.
 * </ol>
 *
 * <p>Safety does not rest on this: the strategy guard and the fences' record revision make a
 * commit under the old backends fail once the record changed, whatever this protocol did. The
 * protocol makes sure nothing is left to commit then, so a process sees a pause, not an error.
 */
public final class Switches implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(Switches.class.getName());

  /** The kinds of strategy that switch. */
  public static final String LOCK = SwitchRequests.LOCK;
  public static final String ALLOC = SwitchRequests.ALLOC;

  /** How long the cluster has to stop and drain before the switch rolls back. */
  public static final Duration DEADLINE = SwitchRequests.DEADLINE;
  /** How often the participant looks while a switch is under way; the watch wakes it sooner. */
  private static final long BUSY_POLL_MS = 200;
  /** How often it looks otherwise: only a lost watch makes this matter. */
  private static final long IDLE_POLL_MS = 2000;

  /** What differs between nodes: the backends' bundles, configurations and bindings. */
  public interface Binder {
    /** The backends of {@code kind} this node could run ({@link #LOCK}, {@link #ALLOC}). */
    List<String> available(String kind);

    /** Makes backend {@code name} ready here (started, configured, active), or says why not. */
    void prepare(String kind, String name) throws Exception;

    /** Binds the core to {@code lock} and {@code alloc}, and waits until it is. */
    void bind(String lock, String alloc) throws Exception;

    /**
     * Lets every backend but {@code lock} and {@code alloc} go (their sessions end): after the
     * engine attached the new ones, so that a late recall from an old one is known for one.
     */
    void retireOthers(String lock, String alloc);

    /** A prepared backend not switched to after all (a rollback): let it go again. */
    void unprepare(String kind, String name);

    /**
     * The keyspace areas a prepared allocator declares as its state ({@code
     * Allocator#STATE}), which the cutover to it clears; checked by {@link #prepare}.
     */
    default List<String> stateAreas(String kind, String name) {
      return List.of();
    }
  }

  private final MetaStore store;
  private final Keyspace space;
  private final SwitchRequests requests;
  private final Membership membership;
  private final EtcFs engine;
  private final Binder binder;
  private final Thread worker;
  private final Object wake = new Object();
  private volatile boolean closed;
  private boolean woken;
  private String lastError;
  private final List<Watch> watches = new ArrayList<>();
  /** The epoch this node answered, and the one whose gate it closed (0: none). */
  private long answered;
  private long stoppedFor;
  /** The request whose target this node prepared, until it is switched to or rolled back. */
  private SwitchRequests.Request prepared;
  /** The switch this node last said it could not follow (0: none). */
  private long reportedFailure;

  public Switches(MetaStore store, String fsName, Membership membership, EtcFs engine,
      Binder binder) {
    this.store = store;
    this.space = Keyspace.of(fsName);
    this.requests = new SwitchRequests(store, space);
    this.membership = membership;
    this.engine = engine;
    this.binder = binder;
    this.worker = new Thread(this::run, "etcfs-switch");
    worker.setDaemon(true);
  }

  /** Starts taking part: a switch already under way is joined at once. */
  public Switches start() {
    watchKeys();
    worker.start();
    return this;
  }

  private void watchKeys() {
    WatchListener listener = new WatchListener() {
      @Override
      public void onEvents(List<WatchEvent> events) {
        wakeUp();
      }

      @Override
      public void onError(MetaStoreException error) {
        LOG.fine("switch watch ended: " + error.getMessage() + "; polling");
      }
    };
    try {
      long from = store.range(space.record(), Keys.after(space.record()), 1).revision() + 1;
      watches.add(store.watch(space.bytes(Keyspace.SWITCH), from, listener));
      watches.add(store.watch(space.record(), from, listener));
    } catch (MetaStoreException e) {
      LOG.warning("switch watch not started (" + e.getMessage() + "); polling every "
          + IDLE_POLL_MS + " ms");
    }
  }

  private void wakeUp() {
    synchronized (wake) {
      woken = true;
      wake.notifyAll();
    }
  }

  private void run() {
    while (!closed) {
      boolean busy;
      try {
        busy = step();
        lastError = null;
      } catch (FsException | RuntimeException e) {
        // Once per distinct failure (etcd away fails every look the same way), then quietly.
        String what = String.valueOf(e.getMessage());
        if (!what.equals(lastError)) {
          LOG.log(Level.WARNING, "switch: " + what, e);
        }
        lastError = what;
        busy = false;
      }
      synchronized (wake) {
        if (!woken && !closed) {
          try {
            wake.wait(busy ? BUSY_POLL_MS : IDLE_POLL_MS);
          } catch (InterruptedException e) {
            return;
          }
        }
        woken = false;
      }
    }
  }

  /** One look at the switch keys and the record; true while a switch is under way. */
  boolean step() throws FsException {
    Optional<KeyValue> recordKv = store.get(space.record());
    if (recordKv.isEmpty()) {
      return false;
    }
    long recordRevision = recordKv.get().modRevision();
    FsRecord record = FsRecord.decode(recordKv.get().value());
    if (engine.strategyRevision() != 0 && recordRevision != engine.strategyRevision()) {
      follow(record, recordRevision);
      return true;
    }
    Optional<KeyValue> requestKv = store.get(requests.requestKey());
    if (requestKv.isEmpty()) {
      if (stoppedFor != 0 || prepared != null) {
        // The cutover deletes the request and rewrites the record at one revision: read after
        // the request, the record tells a cutover from a rollback.
        Optional<KeyValue> now = store.get(space.record());
        if (now.isPresent() && now.get().modRevision() != engine.strategyRevision()) {
          follow(FsRecord.decode(now.get().value()), now.get().modRevision());
          return true;
        }
        rolledBack();
      }
      return false;
    }
    SwitchRequests.Request request = SwitchRequests.Request.decode(requestKv.get().value());
    if (request.record() != recordRevision) {
      rollBack(request, requestKv.get().modRevision(), "the filesystem record changed under it");
      return true;
    }
    if (answered != request.epoch()) {
      answered = request.epoch();
      answer(request, requestKv.get().modRevision());
    }
    decide(request, requestKv.get().modRevision(), recordRevision, record);
    return true;
  }

  /** Prepare, stop, drain; then {@code ok} or {@code fail <reason>}. */
  private void answer(SwitchRequests.Request request, long requestRevision) {
    String answer;
    try {
      binder.prepare(request.kind(), request.to());
      prepared = request;
      engine.switchStop(true);
      stoppedFor = request.epoch();
      long left = Math.max(1, request.deadline() - System.currentTimeMillis());
      engine.switchDrain(System.nanoTime() + left * 1_000_000);
      answer = "ok " + Keyspace.hex(membership.generation()) + " " + engine.switchStoppedAt();
      LOG.info(request.describe() + ": stopped and drained; answered ok");
    } catch (Exception e) {
      String reason = e.getMessage() == null ? e.toString() : e.getMessage();
      answer = "fail " + Keyspace.hex(membership.generation()) + " " + membership.nodeName()
          + ": " + reason.replace('\n', ' ');
      LOG.warning(request.describe() + ": cannot take part: " + reason);
    }
    store.commit(new Txn()
        .when(Compare.modRevision(requests.requestKey(), requestRevision))
        .when(Compare.createRevision(membership.memberKey(), membership.generation()))
        .then(Op.put(requests.ackKey(membership.nodeName()), answer.getBytes(StandardCharsets.UTF_8))));
  }

  /** Cutover once every live member answered ok; rollback on a failure or past the deadline. */
  private void decide(SwitchRequests.Request request, long requestRevision, long recordRevision,
      FsRecord record) {
    Map<String, String> acks = new TreeMap<>();
    for (KeyValue kv : store.range(requests.ackPrefix(),
        Keys.prefixEnd(requests.ackPrefix()), 0).kvs()) {
      acks.put(kv.keyString().substring(kv.keyString().lastIndexOf('/') + 1), kv.valueString());
    }
    Map<String, Long> members = new TreeMap<>();
    for (KeyValue kv : store.range(space.bytes(Keyspace.MEMBERS),
        Keys.prefixEnd(space.bytes(Keyspace.MEMBERS)), 0).kvs()) {
      members.put(kv.keyString().substring(kv.keyString().lastIndexOf('/') + 1),
          kv.createRevision());
    }
    for (Map.Entry<String, String> a : acks.entrySet()) {
      if (a.getValue().startsWith("fail ")) {
        String[] p = a.getValue().split(" ", 3);
        rollBack(request, requestRevision, p.length > 2 ? p[2] : a.getKey() + " failed");
        return;
      }
    }
    List<String> silent = new ArrayList<>();
    long firstStop = Long.MAX_VALUE;
    for (Map.Entry<String, Long> m : members.entrySet()) {
      String ack = acks.get(m.getKey());
      String[] p = ack == null ? new String[0] : ack.split(" ");
      if (p.length < 3 || Long.parseUnsignedLong(p[1], 16) != m.getValue()) {
        silent.add(m.getKey());
      } else {
        firstStop = Math.min(firstStop, Long.parseLong(p[2]));
      }
    }
    if (silent.isEmpty()) {
      cutOver(request, requestRevision, recordRevision, record, members, firstStop);
    } else if (System.currentTimeMillis() > request.deadline()) {
      rollBack(request, requestRevision, "no answer from " + String.join(", ", silent)
          + " within " + DEADLINE.toSeconds() + " s");
    }
  }

  private void cutOver(SwitchRequests.Request request, long requestRevision, long recordRevision,
      FsRecord record, Map<String, Long> members, long firstStop) {
    FsRecord next = new FsRecord(record.uuid(), record.name(), record.blockSize(),
        record.arenaSize(), record.deviceSize(), record.dataStart(), record.arenas(),
        request.lock(), request.alloc(), record.formatted());
    long now = System.currentTimeMillis();
    Properties h = request.history("done");
    h.setProperty("firstStop", Long.toString(firstStop));
    h.setProperty("cutover", Long.toString(now));
    h.setProperty("nodes", String.join(",", members.keySet()));
    Txn txn = new Txn()
        .when(Compare.modRevision(requests.requestKey(), requestRevision))
        .when(Compare.modRevision(space.record(), recordRevision))
        .then(Op.put(space.record(), next.encode()))
        .then(Op.delete(requests.requestKey()))
        .then(Op.deletePrefix(requests.ackPrefix()));
    if (request.kind().equals(ALLOC)) {
      // What the new allocator kept the last time it was in use is stale now: the old one
      // handed out and freed blocks since, recorded only in the ownership records. Cleared in
      // the cutover, it starts from those records, as after a crash of every node (nobody
      // allocates now: every member drained, and the guard refuses the old allocator after).
      List<String> areas = binder.stateAreas(ALLOC, request.alloc());
      for (String area : areas) {
        if (!io.etcfs.spi.alloc.Allocator.isStateArea(area)) {
          rollBack(request, requestRevision, "allocator " + request.alloc() + " declares '"
              + area + "' as its state, which a switch may not clear");
          return;
        }
        txn.then(Op.deletePrefix(space.bytes(area)));
      }
      h.setProperty("cleared", String.join(",", areas));
    }
    txn.then(Op.put(requests.historyKey(request.epoch()), SwitchRequests.store(h)));
    boolean done = store.commit(txn).succeeded();
    if (done) {
      LOG.info(request.describe() + ": cut over by " + membership.nodeName() + " after "
          + (now - firstStop) + " ms");
    }
  }

  private void rollBack(SwitchRequests.Request request, long requestRevision, String reason) {
    boolean done = store.commit(new Txn()
        .when(Compare.modRevision(requests.requestKey(), requestRevision))
        .then(Op.delete(requests.requestKey()))
        .then(Op.deletePrefix(requests.ackPrefix()))
        .then(Op.put(requests.historyKey(request.epoch()),
            SwitchRequests.store(request.history("rolled back: " + reason))))).succeeded();
    if (done) {
      LOG.warning(request.describe() + ": rolled back by " + membership.nodeName() + ": "
          + reason);
    }
  }

  /** The request is gone and the record unchanged: the gate opens on the old backends. */
  private void rolledBack() {
    if (prepared != null) {
      binder.unprepare(prepared.kind(), prepared.to());
      prepared = null;
    }
    if (stoppedFor != 0) {
      engine.switchAbort();
      LOG.info("switch " + stoppedFor + " rolled back: resuming on the backends in use");
      stoppedFor = 0;
    }
  }

  /**
   * The record names other backends than this node runs under: bind them and follow. A node
   * that took part drained before the cutover; one that did not (it missed the request) stops
   * and drains now, and what it buffered under the old backends fails to commit (the guard).
   */
  private void follow(FsRecord record, long recordRevision) throws FsException {
    long epoch = stoppedFor;
    if (!engine.switchStopped()) {
      LOG.warning("the filesystem record changed without this node taking part in a switch;"
          + " following it, what is buffered under the old backends is lost");
      engine.switchStop(false); // its commits fail at once: nobody but this thread follows
      try {
        engine.switchDrain(System.nanoTime() + DEADLINE.toNanos());
      } catch (FsException e) {
        LOG.warning("drain after a missed switch: " + e.getMessage());
      }
    }
    try {
      binder.bind(record.lockBackend(), record.allocBackend());
    } catch (Exception e) {
      // The gate stays closed and the guard refuses the old backends: this node cannot go on.
      // Said where the asker looks (it stops waiting for this node), once per switch.
      String reason = "cannot bind lock backend " + record.lockBackend() + " and allocator "
          + record.allocBackend() + ": " + e.getMessage();
      long failedEpoch = epoch != 0 ? epoch : requests.lastEpoch();
      if (failedEpoch > 0 && failedEpoch != reportedFailure) {
        reportedFailure = failedEpoch;
        store.commit(new Txn().then(Op.put(requests.failedKey(failedEpoch,
            membership.nodeName()), reason.getBytes(StandardCharsets.UTF_8))));
      }
      throw new FsException(io.etcfs.spi.vfs.Errno.EIO, reason);
    }
    engine.switchFollow(recordRevision);
    binder.retireOthers(record.lockBackend(), record.allocBackend());
    prepared = null;
    stoppedFor = 0;
    long resumed = System.currentTimeMillis();
    if (epoch == 0) {
      epoch = requests.lastEpoch();
    }
    if (epoch > 0) {
      store.commit(new Txn().then(Op.put(requests.resumedKey(epoch, membership.nodeName()),
          Long.toString(resumed).getBytes(StandardCharsets.UTF_8))));
    }
    LOG.info("following the switch to lock backend " + record.lockBackend() + ", allocator "
        + record.allocBackend() + " (record revision " + recordRevision + ")");
  }

  // --- the request side: the shell's lock switch ---

  /**
   * Asks the cluster to switch {@code kind} to {@code to}, as this node, and waits for the
   * outcome (see {@link SwitchRequests#request}).
   */
  public String request(String kind, String to, Duration wait) throws InterruptedException {
    wakeUp();
    return requests.request(kind, to, binder.available(kind), membership.nodeName(), wait);
  }

  /** The history, oldest first: one line per switch. */
  public List<String> history() {
    return requests.history();
  }

  @Override
  public void close() {
    closed = true;
    watches.forEach(Watch::close);
    wakeUp();
    worker.interrupt();
  }
}
