package io.etcfs.core.fs.tx;

import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;

/**
 * A commit failed in the store (timeout, lost connection): it may or may not have applied. The
 * caller sees EIO, and blocks it reserved for the change must NOT be abandoned — if the commit
 * did apply they are referenced, and handing them out again would put one block in two files
 * (invariant 1). Leaking the reservation until the allocator rebuilds is the safe side.
 */
public final class OutcomeUnknownException extends FsException {
  private static final long serialVersionUID = 1L;

  OutcomeUnknownException(String message, Throwable cause) {
    super(Errno.EIO, message, cause);
  }
}
