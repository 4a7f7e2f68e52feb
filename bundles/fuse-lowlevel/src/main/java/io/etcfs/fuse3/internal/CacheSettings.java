package io.etcfs.fuse3.internal;

/**
 * What the kernel may cache, in seconds, and how files are opened.
 *
 * @param entrySeconds how long a name stays cached (fuse_entry_param.entry_timeout)
 * @param attrSeconds how long attributes stay cached (attr_timeout)
 * @param negativeSeconds how long "no such name" stays cached; 0 sends ENOENT instead
 * @param directIo open files with direct_io: no page cache, every read and write reaches etcfs
 * @param readdirplus list directories with attributes (useful only with caching on)
 */
record CacheSettings(double entrySeconds, double attrSeconds, double negativeSeconds,
    boolean directIo, boolean readdirplus) {}
