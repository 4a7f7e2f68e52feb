package io.etcfs.fuse.common;

import java.util.function.Supplier;

/** What both front-end components do when they start. */
public final class Components {
  private Components() {}

  /**
   * Runs {@code action} with {@code owner}'s bundle loader as the thread's context loader:
   * jnr-ffi generates its classes through it.
   */
  public static <T> T withLoaderOf(Class<?> owner, Supplier<T> action) {
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    thread.setContextClassLoader(owner.getClassLoader());
    try {
      return action.get();
    } finally {
      thread.setContextClassLoader(previous);
    }
  }

  /** A configuration property that must be set, or a one-line reason naming it. */
  public static String required(String pid, String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(pid + ": " + name + " is not set");
    }
    return value;
  }
}
