package io.etcfs.spi.meta;

/**
 * A metadata store operation failed. The message is one line a user can act on (it names the
 * store's endpoints where the connection is at fault).
 */
public class MetaStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Why an operation failed. */
  public enum Kind {
    /** The store cannot be reached, or did not answer in time. */
    UNAVAILABLE,
    /** The store refused the credentials or the TLS identity. */
    UNAUTHENTICATED,
    /** The lease named in the operation does not exist (it expired or was revoked). */
    LEASE_NOT_FOUND,
    /** A watch asked for a revision the store has compacted away. */
    COMPACTED,
    /** The request exceeded a store limit (request size, operations per transaction). */
    TOO_LARGE,
    /** Anything else. */
    OTHER
  }

  private final Kind kind;

  public MetaStoreException(Kind kind, String message, Throwable cause) {
    super(message, cause);
    this.kind = kind;
  }

  public MetaStoreException(Kind kind, String message) {
    this(kind, message, null);
  }

  public Kind kind() {
    return kind;
  }
}
