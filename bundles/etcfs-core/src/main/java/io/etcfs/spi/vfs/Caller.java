package io.etcfs.spi.vfs;

import java.util.List;

/**
 * Who asks: the calling process's credentials, for ownership of new inodes and the checks the
 * kernel leaves to the filesystem (the kernel checks permissions itself with
 * {@code default_permissions}).
 *
 * @param uid effective user id
 * @param gid effective group id
 * @param pid process id (for POSIX lock owners and logs)
 * @param groups supplementary groups, where known (empty otherwise)
 */
public record Caller(int uid, int gid, int pid, List<Integer> groups) {
  public static final Caller ROOT = new Caller(0, 0, 0, List.of());

  public Caller {
    groups = List.copyOf(groups);
  }

  public boolean isRoot() {
    return uid == 0;
  }
}
