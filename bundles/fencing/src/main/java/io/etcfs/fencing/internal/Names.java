package io.etcfs.fencing.internal;

/** Checks the names that become elements of etcd keys. */
final class Names {
  private Names() {}

  /** A name must be one key element: a '/' in it would put the key under another prefix. */
  static String check(String property, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(property + " is not set");
    }
    if (value.contains("/") || !value.equals(value.trim())) {
      throw new IllegalArgumentException(
          property + " '" + value + "' must not contain '/' or surrounding spaces");
    }
    return value;
  }
}
