/**
 * The inode lock SPI: shared and exclusive inode locks held under a lock session, with
 * fencing tokens and recall. Implemented by {@code lock-etcd} (the default) and
 * {@code lock-hazelcast}; the core binds whichever its configuration names. 2.8: {@link
 * LockReport}, a backend's locks in common terms for the shell.
 */
@Export
@Version("2.8.0")
package io.etcfs.spi.lock;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
