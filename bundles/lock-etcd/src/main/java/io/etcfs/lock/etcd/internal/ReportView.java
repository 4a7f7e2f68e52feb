package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lease.LeaseReport;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockReport;
import io.etcfs.spi.lock.LockReport.ClusterLock;
import io.etcfs.spi.lock.LockReport.LockState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the shell's {@code locks} and {@code leases} show of this service: this node's locks,
 * held and awaited; its counters; every lock key in etcd; the lock session's lease.
 */
final class ReportView {
  private final StoreCounts counts;
  private final LockKeys codec;
  private final NodeLocks locks;
  private final Map<Long, Held> held;
  private final Map<Long, InodeState> inodes;
  private final Recalls recalls;

  ReportView(StoreCounts counts, LockKeys codec, NodeLocks locks, Recalls recalls) {
    this.counts = counts;
    this.codec = codec;
    this.locks = locks;
    this.held = locks.held;
    this.inodes = locks.inodes;
    this.recalls = recalls;
  }

  /** This node's locks, held and awaited, by inode (for the shell's {@code locks}). */
  List<LockState> locks() {
    long now = System.nanoTime();
    List<LockState> rows = new ArrayList<>();
    for (Held h : held.values()) {
      rows.add(new LockState(h.lock.inode(), h.lock.mode(),
          h.recalling ? LockReport.State.RECALL_PENDING : LockReport.State.HELD, h.clean,
          h.lock.fencingToken(), Duration.ofNanos(now - h.grantedAt), h.waiters.size(),
          recalls.served(h.lock.inode())));
    }
    inodes.forEach((inode, st) -> {
      LockMode waiting = st.waiting;
      if (waiting != null) {
        rows.add(new LockState(inode, waiting, LockReport.State.WAITING, false,
            st.requestToken, Duration.ofNanos(now - st.waitingSince), -1,
            recalls.served(inode)));
      }
    });
    rows.sort(Comparator.comparingLong(LockState::inode));
    return rows;
  }

  Map<String, String> counters() {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("recalls served by this node", Long.toString(recalls.served()));
    c.put("etcd round trips", counts.toString());
    c.put("recalls per inode counted for", "the " + RecallCounts.CAPACITY
        + " inodes recalled last");
    return c;
  }

  /** Every lock key in etcd, read now. */
  Optional<List<ClusterLock>> cluster() {
    return Optional.of(LockRows.all(codec, counts.prefix(codec.all(), 0).kvs()));
  }

  /** The lock session's lease, while there is a live session. */
  List<LeaseReport.Lease> leases() {
    Session s = locks.current();
    return s == null || s.isExpired() ? List.of() : List.of(s.report());
  }
}
