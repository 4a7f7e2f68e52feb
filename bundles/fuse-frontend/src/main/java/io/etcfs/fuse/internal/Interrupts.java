package io.etcfs.fuse.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.function.BooleanSupplier;
import jnr.ffi.LibraryLoader;

/**
 * Whether the request the calling callback thread serves was interrupted: libfuse 2 gives a
 * callback no notice, but records the kernel's FUSE_INTERRUPT (sent when the waiting process gets
 * any signal, SIGKILL included) where {@code fuse_interrupted()} reads it for the current
 * request. jnr-fuse does not bind that function; this does. A blocking lock wait asks it often,
 * which is what keeps a process waiting for a cluster-wide lock killable.
 */
final class Interrupts implements BooleanSupplier {
  private static final Logger LOG = System.getLogger(Interrupts.class.getName());

  /** The one libfuse 2 function needed; public, as jnr-ffi implements it in another package. */
  public interface Native {
    int fuse_interrupted();
  }

  private final Native lib;

  private Interrupts(Native lib) {
    this.lib = lib;
  }

  /** Binds libfuse 2 by its soname, as {@link LibfuseProbe} does; call with the bundle loader. */
  static Interrupts load() {
    try {
      return new Interrupts(
          LibraryLoader.create(Native.class).failImmediately().load(LibfuseProbe.LIBRARY));
    } catch (RuntimeException | LinkageError e) {
      LOG.log(Level.WARNING, "fuse_interrupted() is not available ({0}): a process waiting for"
          + " a lock can only be freed by the wait bound", e.toString());
      return new Interrupts(null);
    }
  }

  /** Valid only on a libfuse callback thread, for the request it serves. */
  @Override
  public boolean getAsBoolean() {
    return lib != null && lib.fuse_interrupted() != 0;
  }
}
