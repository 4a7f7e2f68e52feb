package io.etcfs.core.fs;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one node's filesystem engine for the shell's {@code stats}: per operation (the
 * first word of the call's name at the front-end boundary) the calls, the errors and a latency
 * histogram; the metadata store's round trips; bytes to and from the device; recalls served; locks made shared in place.
 * Cheap enough to be always on: a few adds per call.
 */
public final class Stats {
  /** Latency buckets: bucket i holds calls of [2^i, 2^(i+1)) µs; bucket 0 also holds < 1 µs. */
  private static final int BUCKETS = 40;

  /** One operation's counters. */
  public static final class Op {
    final LongAdder calls = new LongAdder();
    final LongAdder errors = new LongAdder();
    final AtomicLongArray buckets = new AtomicLongArray(BUCKETS);
    final LongAdder nanos = new LongAdder();
    /** Failed calls by the errno they answered (0: a failure that was not an FsException). */
    private final Map<Integer, LongAdder> errnos = new ConcurrentHashMap<>();

    void record(long elapsedNanos, boolean failed) {
      record(elapsedNanos, failed ? 0 : -1);
    }

    /** One call; {@code errno} -1 for a success. */
    void record(long elapsedNanos, int errno) {
      calls.increment();
      if (errno >= 0) {
        errors.increment();
        errnos.computeIfAbsent(errno, k -> new LongAdder()).increment();
      }
      nanos.add(elapsedNanos);
      long micros = Math.max(1, elapsedNanos / 1000);
      buckets.incrementAndGet(Math.min(BUCKETS - 1, 63 - Long.numberOfLeadingZeros(micros)));
    }

    public long calls() {
      return calls.sum();
    }

    /** Failed calls by errno, in errno order. */
    public Map<Integer, Long> errnos() {
      Map<Integer, Long> out = new TreeMap<>();
      errnos.forEach((errno, n) -> out.put(errno, n.sum()));
      return out;
    }

    /**
     * The latency histogram, read now: element i counts calls of [2^i, 2^(i+1)) µs (element 0
     * also those under 1 µs).
     */
    public long[] buckets() {
      long[] out = new long[BUCKETS];
      for (int i = 0; i < BUCKETS; i++) {
        out[i] = buckets.get(i);
      }
      return out;
    }

    /** The calls' total time, in nanoseconds. */
    public long nanos() {
      return nanos.sum();
    }

    public long errors() {
      return errors.sum();
    }

    /**
     * The latency (µs) under which a fraction {@code q} of the calls finished: the upper edge of
     * the histogram bucket that holds that call, so within a factor of two.
     */
    public long percentileMicros(double q) {
      long total = 0;
      for (int i = 0; i < BUCKETS; i++) {
        total += buckets.get(i);
      }
      if (total == 0) {
        return 0;
      }
      long rank = (long) Math.ceil(q * total);
      long seen = 0;
      for (int i = 0; i < BUCKETS; i++) {
        seen += buckets.get(i);
        if (seen >= rank) {
          return 1L << (i + 1);
        }
      }
      return 1L << BUCKETS;
    }

    public long meanMicros() {
      long n = calls();
      return n == 0 ? 0 : nanos.sum() / n / 1000;
    }
  }

  private final Map<String, Op> ops = new ConcurrentHashMap<>();
  final LongAdder storeGets = new LongAdder();
  final LongAdder storeRanges = new LongAdder();
  final LongAdder storeCommits = new LongAdder();
  /** How long this node's commits took, from the call to etcd's answer (or failure). */
  final Op storeCommitTime = new Op();
  final LongAdder deviceReadBytes = new LongAdder();
  final LongAdder deviceWriteBytes = new LongAdder();
  final LongAdder recalls = new LongAdder();
  /**
   * How long this node's calls waited in the lock backend for an inode lock (one ask each,
   * granted or not), and how long a recall served here took from the backend's ask to the lock
   * let go (flush, commit, release): the hand-over's share on this side.
   */
  final Op lockWaits = new Op();
  final Op recallHandovers = new Op();
  /** Blocks written to the device ahead of their commit, at a full buffer (Flusher#writeOut). */
  final LongAdder writtenAhead = new LongAdder();
  /** Times a caller waited for a write-out's device writes to land (Flusher#land). */
  final LongAdder writeOutWaits = new LongAdder();
  /** Blocks written over their committed device blocks (Flusher, overwrites in place). */
  final LongAdder overwrittenInPlace = new LongAdder();
  /** This node's clean exclusive locks made shared in place (kept caches, no hand-over). */
  final LongAdder downgrades = new LongAdder();
  /**
   * Directory delegations taken, unlinks and creates answered from their queues, and the
   * commits that carried them (both kinds).
   */
  final LongAdder delegations = new LongAdder();
  final LongAdder queuedUnlinks = new LongAdder();
  final LongAdder queuedCreates = new LongAdder();
  final LongAdder queuedCommits = new LongAdder();
  /** Changes that found their directory's queue full and waited for its next batch. */
  final LongAdder queueFullWaits = new LongAdder();
  /** A delegated directory's own chmod/chown/utimens answered from its queue. */
  final LongAdder queuedSetattrs = new LongAdder();
  /** Links, renames and unlinks of a queued create's names, answered by amending it. */
  final LongAdder queuedLinks = new LongAdder();
  /** Queued creates that committed their file's data too (its last close came first). */
  final LongAdder carriedCreates = new LongAdder();
  /** Queued unlinks that could not be committed (their delegation lost): the names stayed. */
  final LongAdder lostUnlinks = new LongAdder();
  /** Queued creates that could not be committed: those files are gone, with what was written. */
  final LongAdder lostCreates = new LongAdder();

  void record(String what, long elapsedNanos, boolean failed) {
    record(what, elapsedNanos, failed ? 0 : -1);
  }

  /** One front-end call; {@code errno} -1 for a success, 0 for a failure without one. */
  void record(String what, long elapsedNanos, int errno) {
    int space = what.indexOf(' ');
    String op = space < 0 ? what : what.substring(0, space);
    ops.computeIfAbsent(op, k -> new Op()).record(elapsedNanos, errno);
  }

  public Op lockWaits() {
    return lockWaits;
  }

  public Op recallHandovers() {
    return recallHandovers;
  }

  /** Every operation seen so far, by name. */
  public Map<String, Op> ops() {
    return new TreeMap<>(ops);
  }

  public long storeGets() {
    return storeGets.sum();
  }

  public long storeRanges() {
    return storeRanges.sum();
  }

  public long storeCommits() {
    return storeCommits.sum();
  }

  public Op storeCommitTime() {
    return storeCommitTime;
  }

  public long deviceReadBytes() {
    return deviceReadBytes.sum();
  }

  public long deviceWriteBytes() {
    return deviceWriteBytes.sum();
  }

  public long writtenAheadBlocks() {
    return writtenAhead.sum();
  }

  public long writeOutWaits() {
    return writeOutWaits.sum();
  }

  public long overwrittenInPlaceBlocks() {
    return overwrittenInPlace.sum();
  }

  public long recalls() {
    return recalls.sum();
  }

  public long downgrades() {
    return downgrades.sum();
  }

  public long delegations() {
    return delegations.sum();
  }

  public long queuedUnlinks() {
    return queuedUnlinks.sum();
  }

  public long queuedCreates() {
    return queuedCreates.sum();
  }

  public long queuedCommits() {
    return queuedCommits.sum();
  }

  public long queueFullWaits() {
    return queueFullWaits.sum();
  }

  public long queuedSetattrs() {
    return queuedSetattrs.sum();
  }

  public long queuedLinks() {
    return queuedLinks.sum();
  }

  public long carriedCreates() {
    return carriedCreates.sum();
  }

  public long lostCreates() {
    return lostCreates.sum();
  }

  public long lostUnlinks() {
    return lostUnlinks.sum();
  }
}
