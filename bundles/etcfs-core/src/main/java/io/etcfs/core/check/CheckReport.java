package io.etcfs.core.check;

import java.util.List;
import java.util.Map;

/**
 * What a check found.
 *
 * @param fsName the filesystem
 * @param revision the store revision everything was read at
 * @param findings faults, then pending work, each once
 * @param notChecked what this check could not look at, in words (never silently clean)
 * @param stats counts: inodes, directories, entries, extents, data, referenced and free blocks
 */
public record CheckReport(String fsName, long revision, List<Finding> findings,
    List<String> notChecked, Map<String, Long> stats) {

  public CheckReport {
    findings = List.copyOf(findings);
    notChecked = List.copyOf(notChecked);
    stats = Map.copyOf(stats);
  }

  /** The faults: what makes the check fail. */
  public List<Finding> faults() {
    return findings.stream().filter(f -> !f.pending()).toList();
  }

  /** Work in flight that the cluster finishes by itself. */
  public List<Finding> pending() {
    return findings.stream().filter(Finding::pending).toList();
  }

  public boolean clean() {
    return faults().isEmpty();
  }
}
