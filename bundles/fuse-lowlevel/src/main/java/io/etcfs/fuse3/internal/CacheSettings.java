package io.etcfs.fuse3.internal;

/**
 * What the kernel may cache, in seconds, and how files are opened. Every cached thing is
 * invalidated when it goes stale (docs/ARCHITECTURE.md, "Kernel caches"); the timeouts only bound
 * how long a missed invalidation could last.
 *
 * @param entrySeconds how long a name stays cached (fuse_entry_param.entry_timeout)
 * @param negativeSeconds how long "no such name" stays cached; 0 sends ENOENT instead
 * @param attrSeconds how long a file's attributes stay cached while this node holds its lock
 *     (without the lock they are not cached at all)
 * @param dirAttrSeconds how long a directory's (or symlink's) attributes stay cached
 * @param pageCache keep file data in the kernel's page cache under the inode lock; false opens
 *     every file with direct_io
 * @param readdirplus list directories with attributes
 */
record CacheSettings(double entrySeconds, double negativeSeconds, double attrSeconds,
    double dirAttrSeconds, boolean pageCache, boolean readdirplus) {

  /** Nothing cached: every call reaches etcfs (the libfuse 2 front end's behaviour). */
  static CacheSettings none() {
    return new CacheSettings(0, 0, 0, 0, false, false);
  }
}
