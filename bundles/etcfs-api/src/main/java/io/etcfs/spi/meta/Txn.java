package io.etcfs.spi.meta;

import java.util.ArrayList;
import java.util.List;

/**
 * A multi-key compare-and-set: if every {@link Compare} holds, all {@code onSuccess} ops apply
 * atomically at one new revision; otherwise the {@code onFailure} ops do. Every metadata change in
 * etcfs is one such transaction, so that later guards (the committing node's generation, its lock
 * token) are added as compares without reshaping the change.
 *
 * <p>A transaction must stay within the store's limits (etcd: 128 operations, 1.5 MiB).
 */
public final class Txn {
  private final List<Compare> compares = new ArrayList<>();
  private final List<Op> onSuccess = new ArrayList<>();
  private final List<Op> onFailure = new ArrayList<>();

  public Txn when(Compare compare) {
    compares.add(compare);
    return this;
  }

  public Txn then(Op op) {
    onSuccess.add(op);
    return this;
  }

  public Txn otherwise(Op op) {
    onFailure.add(op);
    return this;
  }

  public List<Compare> compares() {
    return List.copyOf(compares);
  }

  public List<Op> onSuccess() {
    return List.copyOf(onSuccess);
  }

  public List<Op> onFailure() {
    return List.copyOf(onFailure);
  }

  /** The number of store operations this transaction costs against the per-transaction limit. */
  public int size() {
    return compares.size() + Math.max(onSuccess.size(), onFailure.size());
  }
}
