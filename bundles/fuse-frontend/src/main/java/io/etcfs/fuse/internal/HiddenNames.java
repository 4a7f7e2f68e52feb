package io.etcfs.fuse.internal;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Files unlinked while open on this node, by the name libfuse 2 keeps serving them under.
 * libfuse's high-level API reaches a file only through a path: with {@code hard_remove} an
 * unlinked file has none, and libfuse itself answers ENOENT to its fstat before etcfs sees the
 * call. Without it, libfuse renames the file to {@code .fuse_hidden<node><counter>} at the
 * unlink and unlinks that name at the last close. etcfs makes that rename the real unlink (the
 * name never appears in the directory, on this node or another) and answers for the hidden name
 * from here until then. Such names are libfuse's: a file a user renames to one while it is open
 * is unlinked, as libfuse would do with it at the last close.
 */
final class HiddenNames {
  private static final Pattern NAME = Pattern.compile("\\.fuse_hidden[0-9a-f]{16}");
  private final Map<String, Long> hidden = new ConcurrentHashMap<>();

  static boolean isHidden(String name) {
    return name.startsWith(".fuse_hidden") && NAME.matcher(name).matches();
  }

  Long get(long dir, String name) {
    return hidden.get(key(dir, name));
  }

  void put(long dir, String name, long ino) {
    hidden.put(key(dir, name), ino);
  }

  /** Forgets a hidden name; false if it was never one. */
  boolean remove(long dir, String name) {
    return hidden.remove(key(dir, name)) != null;
  }

  int size() {
    return hidden.size();
  }

  boolean isEmpty() {
    return hidden.isEmpty();
  }

  private static String key(long dir, String name) {
    return dir + "/" + name;
  }
}
