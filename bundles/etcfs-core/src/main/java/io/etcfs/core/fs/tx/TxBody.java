package io.etcfs.core.fs.tx;

import io.etcfs.spi.vfs.FsException;

/**
 * One attempt of a metadata change: reads through the {@link MetaTx}, decides, and records its
 * writes there. Runs again with fresh reads when the commit finds that something it read
 * changed, so it must have no side effects outside the transaction.
 */
@FunctionalInterface
public interface TxBody<T> {
  T run(MetaTx tx) throws FsException;
}
