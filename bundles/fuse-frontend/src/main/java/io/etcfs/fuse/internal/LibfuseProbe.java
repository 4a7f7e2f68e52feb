package io.etcfs.fuse.internal;

import com.kenai.jffi.Library;
import ru.serce.jnrfuse.FuseStubFS;

/**
 * Proves, without mounting anything, that FUSE can work in this JVM: libfuse 2 loads and jnr-fuse
 * can build its callback table inside this bundle. Failing here, at start, with a line the
 * operator can act on beats failing at the first mount with a linker stack trace.
 */
final class LibfuseProbe {
  static final String LIBRARY = "libfuse.so.2";
  static final String MISSING = LIBRARY + " not found: install the libfuse2 package";

  private LibfuseProbe() {}

  /** Runs the probe with the bundle's loader as context loader, as jnr-ffi expects. */
  static void check() {
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    thread.setContextClassLoader(LibfuseProbe.class.getClassLoader());
    try {
      openLibfuse(LIBRARY);
      new ProbeFs();
    } catch (LinkageError e) {
      throw new IllegalStateException("jnr-fuse cannot bind " + LIBRARY + ": " + e, e);
    } finally {
      thread.setContextClassLoader(previous);
    }
  }

  /**
   * Opens the library by its exact soname. jnr-fuse itself asks for "fuse" and jnr-ffi would
   * settle for any libfuse.so.N; libfuse 3 has a different ABI, so it must not count as found.
   */
  static void openLibfuse(String soname) {
    try {
      if (Library.getCachedInstance(soname, Library.LAZY | Library.LOCAL) == null) {
        throw new IllegalStateException(MISSING + " (" + Library.getLastError() + ")");
      }
    } catch (UnsatisfiedLinkError e) {
      throw new IllegalStateException(
          "jffi's native stub cannot be loaded (is the temporary directory noexec?): " + e, e);
    }
  }

  /** The smallest file system jnr-fuse accepts; constructing it loads and binds libfuse. */
  private static final class ProbeFs extends FuseStubFS {
    @Override
    protected String getFSName() {
      return "etcfs";
    }
  }
}
