package io.etcfs.core.fs;

import io.etcfs.core.fs.tx.TxRunner;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The boundary every front-end call passes: a fenced node answers EIO to everything, a store
 * failure becomes EIO (the store bounds each call, so nothing hangs), and an unexpected exception
 * becomes EIO with one log line instead of escaping into the front end.
 */
final class Calls {
  private static final Logger LOG = Logger.getLogger(Calls.class.getName());

  interface Call<T> {
    T call() throws FsException;
  }

  interface VoidCall {
    void call() throws FsException;
  }

  private Calls() {}

  static <T> T run(Ctx ctx, String what, Call<T> call) throws FsException {
    ctx.tx.checkFenced();
    try {
      return call.call();
    } catch (MetaStoreException e) {
      throw TxRunner.storeFailure(what, e);
    } catch (RuntimeException e) {
      LOG.log(Level.SEVERE, what + " failed unexpectedly", e);
      throw new FsException(Errno.EIO, what + ": " + e, e);
    }
  }

  static void run(Ctx ctx, String what, VoidCall call) throws FsException {
    run(ctx, what, () -> {
      call.call();
      return null;
    });
  }
}
