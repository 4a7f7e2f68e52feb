package io.etcfs.core.check;

/**
 * One thing the check found.
 *
 * @param kind a stable name of what is wrong ({@code dirent-dangling}, {@code nlink}, ...), for
 *     scripts; docs/ARCHITECTURE.md lists them
 * @param subject the key or inode it is about
 * @param detail what is wrong, in words
 * @param pending true for something in flight that the cluster finishes by itself (a dead
 *     node's recovery, a lock that goes with its lease): reported, not a fault
 */
public record Finding(String kind, String subject, String detail, boolean pending) {

  static Finding of(String kind, String subject, String detail) {
    return new Finding(kind, subject, detail, false);
  }

  static Finding pending(String kind, String subject, String detail) {
    return new Finding(kind, subject, detail, true);
  }

  /** The report's line: {@code <kind> <subject>: <detail>}. */
  public String line() {
    return kind + " " + subject + ": " + detail;
  }
}
