package io.etcfs.fuse3.internal;

import com.kenai.jffi.Library;
import java.util.List;
import jnr.ffi.LibraryLoader;

/**
 * Loads libfuse 3 and proves it has every function this front end calls, naming what is
 * missing in one line an operator can act on (the node then uses the libfuse 2 front end).
 */
final class Libfuse3Probe {
  static final String MISSING = Libfuse3.SONAME + " not found: install the libfuse3-3 package";
  /** Functions the loop needs (libfuse 3.0 has them; a library that lacks one is not usable). */
  static final List<String> LOOP_FUNCTIONS = List.of(
      "fuse_session_receive_buf", "fuse_session_process_buf", "fuse_session_exited");

  private Libfuse3Probe() {}

  /** Binds libfuse 3; call with the bundle's class loader as the context loader. */
  static Libfuse3 load() {
    Library library;
    try {
      library = Library.getCachedInstance(Libfuse3.SONAME, Library.LAZY | Library.LOCAL);
    } catch (UnsatisfiedLinkError e) {
      throw new IllegalStateException(
          "jffi's native stub cannot be loaded (is the temporary directory noexec?): " + e, e);
    }
    if (library == null) {
      throw new IllegalStateException(MISSING + " (" + Library.getLastError() + ")");
    }
    for (String symbol : LOOP_FUNCTIONS) {
      if (library.getSymbolAddress(symbol) == 0) {
        throw new IllegalStateException(Libfuse3.SONAME + " has no " + symbol
            + ": the low-level front end needs libfuse 3.0 or later");
      }
    }
    try {
      return LibraryLoader.create(Libfuse3.class).failImmediately().load(Libfuse3.SONAME);
    } catch (LinkageError e) {
      throw new IllegalStateException("jnr-ffi cannot bind " + Libfuse3.SONAME + ": " + e, e);
    }
  }
}
