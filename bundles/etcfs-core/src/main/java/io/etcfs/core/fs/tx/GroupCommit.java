package io.etcfs.core.fs.tx;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Group commit of changes nobody waits for with impatience (a file's commit at its release,
 * after {@code close(2)} has returned): a caller queues its body and waits; whoever finds no
 * commit under way leads — takes every body queued (up to {@link #MAX_PARTS}), runs the
 * durability step once for all of them (the device flush their data needs before any metadata
 * may point at it, invariant 2), and commits them with {@link TxRunner#runTogether}, as few
 * transactions as their keys allow. No timer: while one group commits, the next one gathers,
 * so a lone caller waits for nothing and a busy node's commits batch themselves.
 */
public final class GroupCommit {
  /** What must be durable before the metadata of any queued body is committed. */
  @FunctionalInterface
  public interface Durability {
    void sync() throws IOException;
  }

  /** Bodies led at once; etcd's 128 operations per transaction cut them finer. */
  static final int MAX_PARTS = 32;

  private final TxRunner runner;
  private final Durability before;
  private final Object lock = new Object();
  private final ArrayDeque<TxRunner.Part<?>> queue = new ArrayDeque<>();
  private boolean leading;

  public GroupCommit(TxRunner runner, Durability before) {
    this.runner = runner;
    this.before = before;
  }

  /** Runs {@code body} in a group with whatever else is queued; as {@link TxRunner#run}. */
  public <T> T run(String what, TxBody<T> body) throws FsException {
    TxRunner.Part<T> mine = new TxRunner.Part<>(what, body);
    boolean interrupted = false;
    try {
      synchronized (lock) {
        queue.add(mine);
      }
      while (true) {
        List<TxRunner.Part<?>> group = new ArrayList<>();
        synchronized (lock) {
          while (!mine.done() && leading) {
            try {
              lock.wait();
            } catch (InterruptedException e) {
              // Queued, the body is committed by a leader whatever this caller does; it waits
              // for that (it holds the file's lock, which must not be let go meanwhile).
              interrupted = true;
            }
          }
          if (mine.done()) {
            return mine.result();
          }
          leading = true;
          while (!queue.isEmpty() && group.size() < MAX_PARTS) {
            group.add(queue.poll());
          }
        }
        try {
          lead(group);
        } finally {
          synchronized (lock) {
            leading = false;
            lock.notifyAll();
          }
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void lead(List<TxRunner.Part<?>> group) {
    try {
      before.sync();
    } catch (IOException | RuntimeException e) {
      // Nothing was committed: each caller gives its blocks back, as after a failed flush.
      FsException failure = new FsException(Errno.EIO, "device flush before a commit: " + e, e);
      group.forEach(p -> p.fail(failure));
      return;
    }
    try {
      runner.runTogether(group);
    } catch (RuntimeException e) {
      // Some of the group may have been committed: the blocks of those not known to be stay
      // allocated (as after a commit whose outcome is unknown), never given to another file.
      FsException failure = new OutcomeUnknownException("group commit: " + e, e);
      group.forEach(p -> {
        if (!p.done()) {
          p.fail(failure);
        }
      });
    }
  }
}
