package io.etcfs.spi.meta;

/**
 * The outcome of a {@link Txn}.
 *
 * @param succeeded whether every compare held (and so the success ops were applied)
 * @param revision the store revision after the transaction
 */
public record TxnResult(boolean succeeded, long revision) {}
