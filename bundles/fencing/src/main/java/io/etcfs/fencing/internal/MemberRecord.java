package io.etcfs.fencing.internal;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Properties;
import java.util.stream.Collectors;

/**
 * The value of a membership key: a few {@code key=value} lines that an operator can read with
 * {@code etcdctl get} and the shell's {@code members} command can parse. Properties syntax, so
 * a mountpoint with spaces or colons survives the round trip.
 */
final class MemberRecord {
  private MemberRecord() {}

  static String text(String host, long pid, String mountpoint, Instant joined, Duration ttl) {
    return text(host, pid, mountpoint, joined, ttl, "");
  }

  /** As above, with the node's metrics address ({@code metrics}, absent if empty). */
  static String text(String host, long pid, String mountpoint, Instant joined, Duration ttl,
      String metrics) {
    Properties properties = new Properties();
    if (!metrics.isEmpty()) {
      properties.setProperty("metrics", metrics);
    }
    properties.setProperty("host", host);
    properties.setProperty("pid", Long.toString(pid));
    properties.setProperty("mountpoint", mountpoint);
    properties.setProperty("joined", joined.toString());
    properties.setProperty("leaseTtl", Long.toString(ttl.toSeconds()));
    StringWriter text = new StringWriter();
    try {
      properties.store(text, null);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot happen: writing to a string", e);
    }
    // store() always writes a date comment; the record already carries its join time.
    return text.toString().lines().filter(l -> !l.startsWith("#")).collect(Collectors.joining("\n"))
        + "\n";
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** The configured host name, or this machine's own when none is configured. */
  static String host(String configured) {
    if (configured != null && !configured.isBlank()) {
      return configured.trim();
    }
    // The kernel's name costs no DNS look-up, which could stall a join on a badly set-up host.
    try {
      return Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
    } catch (IOException e) {
      return localHostName();
    }
  }

  private static String localHostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return "unknown";
    }
  }
}
