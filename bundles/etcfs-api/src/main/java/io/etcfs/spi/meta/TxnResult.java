package io.etcfs.spi.meta;

import java.util.List;

/**
 * The outcome of a {@link Txn}.
 *
 * @param succeeded whether every compare held (and so the success ops were applied)
 * @param revision the store revision after the transaction
 * @param ranges the answers of the branch's {@link Op.Range} reads, in their order
 */
public record TxnResult(boolean succeeded, long revision, List<RangeResult> ranges) {
  public TxnResult {
    ranges = List.copyOf(ranges);
  }

  /** A transaction that read nothing. */
  public TxnResult(boolean succeeded, long revision) {
    this(succeeded, revision, List.of());
  }
}
