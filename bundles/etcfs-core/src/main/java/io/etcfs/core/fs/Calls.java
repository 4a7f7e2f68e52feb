package io.etcfs.core.fs;

import io.etcfs.core.fs.tx.TxRunner;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The boundary every front-end call passes: a fenced node answers EIO to everything (checked
 * when the call starts and again before it answers), a store
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
    long start = System.nanoTime();
    int errno = 0; // -1 once it succeeded; 0: failed with no errno of its own
    boolean wouldBlock = false;
    try {
      ctx.tx.checkFenced();
      T result = call.call();
      // Checked again before answering: a node frozen in the middle of a call (after the first
      // check) and resumed past its deadline must not report success for it. A write it took
      // into its buffer then is never committed; the caller learns so now, not at close.
      ctx.tx.checkFenced();
      errno = -1;
      return result;
    } catch (FsException e) {
      errno = e.errno();
      throw e;
    } catch (MetaStoreException e) {
      errno = Errno.EIO;
      throw TxRunner.storeFailure(what, e);
    } catch (NoWait.WouldBlock e) {
      wouldBlock = true; // answered where it may wait, and counted there
      throw e;
    } catch (RuntimeException e) {
      errno = Errno.EIO;
      LOG.log(Level.SEVERE, what + " failed unexpectedly", e);
      throw new FsException(Errno.EIO, what + ": " + e, e);
    } finally {
      if (!wouldBlock) {
        ctx.stats.record(what, System.nanoTime() - start, errno);
      }
    }
  }

  static void run(Ctx ctx, String what, VoidCall call) throws FsException {
    run(ctx, what, () -> {
      call.call();
      return null;
    });
  }
}
