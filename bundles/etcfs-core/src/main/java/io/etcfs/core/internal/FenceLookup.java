package io.etcfs.core.internal;

import io.etcfs.spi.fs.InodeFence;
import java.util.Optional;

/**
 * An inode's fence as this node reads it, for the lock table's STATE column: which grant last
 * raised it and whether that holder declared everything committed (a lock backend's cluster view
 * no longer knows that). Registered by the core with the filesystem, inside the core bundle only.
 */
@FunctionalInterface
public interface FenceLookup {
  /** The fence, or empty if there is none or it cannot be read now. */
  Optional<InodeFence> fenceOf(long ino);
}
