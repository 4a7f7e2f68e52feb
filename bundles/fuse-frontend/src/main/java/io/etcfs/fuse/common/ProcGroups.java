package io.etcfs.fuse.common;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The supplementary groups of the thread behind a FUSE request. FUSE hands over only its uid,
 * gid and thread id; the rest is in {@code /proc/<tid>/status} (as libfuse's fuse_getgroups
 * reads it). Read only when a group check needs it: most requests never do.
 */
public final class ProcGroups {
  private ProcGroups() {}

  /** The groups of thread {@code tid}; empty if it has gone (it waits for no answer then). */
  public static List<Integer> of(int tid) {
    return of(Path.of("/proc", Integer.toString(tid), "status"));
  }

  public static List<Integer> of(Path status) {
    try (BufferedReader r = Files.newBufferedReader(status, StandardCharsets.US_ASCII)) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        if (line.startsWith("Groups:")) {
          return parse(line.substring("Groups:".length()));
        }
      }
    } catch (IOException | NumberFormatException e) {
      return List.of();
    }
    return List.of();
  }

  private static List<Integer> parse(String ids) {
    List<Integer> groups = new ArrayList<>();
    for (String id : ids.trim().split("\\s+")) {
      if (!id.isEmpty()) {
        groups.add(Integer.parseUnsignedInt(id));
      }
    }
    return groups;
  }
}
