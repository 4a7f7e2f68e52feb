package io.etcfs.spi.shell;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The path of an inode, where the node knows it: for shell output that names inodes (the lock
 * table). Registered by the core. A best effort for people, never used for a decision: the
 * name may be one of several (hard links) and may change the moment after it was found.
 */
@ProviderType
public interface InodePaths {
  /** The inode's path from the filesystem's root ({@code /dir/file}), or empty if unknown. */
  Optional<String> pathOf(long ino);
}
