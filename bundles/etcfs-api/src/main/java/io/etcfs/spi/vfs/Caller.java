package io.etcfs.spi.vfs;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Who asks: the calling process's credentials, for ownership of new inodes and the checks the
 * kernel leaves to the filesystem (the kernel checks permissions itself with
 * {@code default_permissions}). The supplementary groups may be read lazily: FUSE hands over only
 * the primary group, and reading the others costs a look at {@code /proc}, which only a group
 * check that the primary group does not settle needs.
 */
public final class Caller {
  public static final Caller ROOT = new Caller(0, 0, 0, List.of());

  private final int uid;
  private final int gid;
  private final int pid;
  private final Supplier<List<Integer>> source;
  private volatile List<Integer> groups;

  /**
   * @param uid effective user id
   * @param gid effective group id
   * @param pid process (or thread) id, for POSIX lock owners and logs
   * @param groups supplementary groups
   */
  public Caller(int uid, int gid, int pid, List<Integer> groups) {
    this(uid, gid, pid, () -> groups);
    this.groups = List.copyOf(groups);
  }

  private Caller(int uid, int gid, int pid, Supplier<List<Integer>> source) {
    this.uid = uid;
    this.gid = gid;
    this.pid = pid;
    this.source = Objects.requireNonNull(source);
  }

  /**
   * A caller whose supplementary groups {@code source} reads at most once, when a check first
   * needs them; a source that cannot tell returns an empty list.
   */
  public static Caller withGroupsFrom(int uid, int gid, int pid,
      Supplier<List<Integer>> source) {
    return new Caller(uid, gid, pid, source);
  }

  public int uid() {
    return uid;
  }

  public int gid() {
    return gid;
  }

  public int pid() {
    return pid;
  }

  /** The supplementary groups (read from the source on first use). */
  public List<Integer> groups() {
    List<Integer> g = groups;
    if (g == null) {
      g = List.copyOf(source.get());
      groups = g;
    }
    return g;
  }

  public boolean isRoot() {
    return uid == 0;
  }

  /** Whether {@code group} is the caller's primary or one of its supplementary groups. */
  public boolean inGroup(int group) {
    return gid == group || groups().contains(group);
  }

  @Override
  public String toString() {
    return "Caller[uid=" + uid + ", gid=" + gid + ", pid=" + pid + "]";
  }
}
