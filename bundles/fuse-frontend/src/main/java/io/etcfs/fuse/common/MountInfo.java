package io.etcfs.fuse.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * One line of {@code /proc/self/mountinfo}: how this process sees whether a mount is there. Read
 * rather than stat'ing the mountpoint, which would call into the filesystem being mounted (or
 * hang on a dead one).
 *
 * @param device the mount's st_dev as "major:minor"
 * @param mountpoint where it is mounted
 * @param type the filesystem type ("fuse.etcfs")
 * @param source the mount source ("etcfs:name")
 */
public record MountInfo(String device, String mountpoint, String type, String source) {
  public static final Path PROC = Path.of("/proc/self/mountinfo");

  /** The topmost mount at {@code mountpoint}, if any. */
  public static Optional<MountInfo> at(Path mountpoint) {
    return at(PROC, mountpoint);
  }

  public static Optional<MountInfo> at(Path table, Path mountpoint) {
    String wanted = mountpoint.toString();
    List<String> lines;
    try {
      lines = Files.readAllLines(table);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + table, e);
    }
    MountInfo found = null;
    for (String line : lines) {
      MountInfo info = parse(line);
      if (info != null && info.mountpoint.equals(wanted)) {
        found = info; // later lines are mounted on top of earlier ones
      }
    }
    return Optional.ofNullable(found);
  }

  /** "36 35 98:0 /root /mnt rw,noatime master:1 - ext3 /dev/root rw": null if malformed. */
  public static MountInfo parse(String line) {
    String[] fields = line.split(" ");
    int separator = List.of(fields).indexOf("-");
    if (fields.length < 5 || separator < 0 || separator + 2 >= fields.length) {
      return null;
    }
    return new MountInfo(
        fields[2], unescape(fields[4]), unescape(fields[separator + 1]),
        unescape(fields[separator + 2]));
  }

  /** The kernel writes space, tab, newline and backslash as \ooo octal escapes. */
  public static String unescape(String field) {
    if (field.indexOf('\\') < 0) {
      return field;
    }
    StringBuilder out = new StringBuilder(field.length());
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '\\' && isOctal(field, i + 1)) {
        out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static boolean isOctal(String s, int from) {
    for (int i = from; i < from + 3; i++) {
      if (i >= s.length() || s.charAt(i) < '0' || s.charAt(i) > '7') {
        return false;
      }
    }
    return true;
  }
}
