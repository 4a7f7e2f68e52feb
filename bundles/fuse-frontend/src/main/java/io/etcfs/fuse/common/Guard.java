package io.etcfs.fuse.common;

import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs one FUSE callback and turns its outcome into the int libfuse expects. jnr-fuse swallows an
 * exception thrown out of a callback and answers 0 — success — so nothing may escape: an
 * {@link FsException} becomes its negative errno, anything else -EIO, and a non-negative result
 * passes through.
 */
public final class Guard {
  private static final Logger LOG = System.getLogger(Guard.class.getName());
  /** Failures whose stack trace was already logged: a bug hit on every call logs it once. */
  private final Set<String> traced = ConcurrentHashMap.newKeySet();
  /** Set once the mount is torn down: a call still arriving (lazy unmount) gets EIO. */
  private volatile boolean closed;

  @FunctionalInterface
  public interface Call {
    int run() throws FsException;
  }

  public void close() {
    closed = true;
  }

  public int run(String op, String path, Call call) {
    if (closed) {
      return -Errno.EIO;
    }
    try {
      return call.run();
    } catch (FsException e) {
      return failed(op, path, e);
    } catch (NoWait.WouldBlock e) {
      throw e; // not an answer: the caller hands the call to a thread that may wait
    } catch (Throwable t) { // every Error too: an escaped one would answer "success"
      return unexpected(op, path, t);
    }
  }

  /** The libfuse 2 front end names the path; the low-level one has none to name (""). */
  private static String what(String op, String path) {
    return path == null || path.isEmpty() ? op : op + " " + path;
  }

  private int failed(String op, String path, FsException e) {
    int errno = e.errno() > 0 ? e.errno() : Errno.EIO;
    if (errno == Errno.EIO) {
      LOG.log(Level.WARNING, "{0}: EIO: {1}", what(op, path), e.getMessage());
    } else {
      LOG.log(Level.DEBUG, "{0}: errno {1}: {2}", what(op, path), errno, e.getMessage());
    }
    return -errno;
  }

  private int unexpected(String op, String path, Throwable t) {
    if (traced.add(op + ' ' + t.getClass().getName())) {
      LOG.log(Level.ERROR, what(op, path) + " failed, answering EIO", t);
    } else {
      LOG.log(Level.ERROR, "{0} failed, answering EIO: {1}", what(op, path), t.toString());
    }
    return -Errno.EIO;
  }
}
