/**
 * The inode lock SPI: shared and exclusive inode locks held under a lock session, with
 * fencing tokens and recall. Implemented by {@code lock-etcd} (the default) and
 * {@code lock-hazelcast}; the core binds whichever its configuration names. 2.8: {@link
 * LockReport}, a backend's locks in common terms for the shell. 3.0: a backend only arbitrates;
 * fencing, the clean declaration and what a reader waits for are the core's ({@link
 * io.etcfs.spi.fs.InodeFence}), so {@code guards}, {@code cleanOps}, {@code dirty}, {@code
 * attributesFrom} and {@code awaitView} are gone.
 */
@Export
@Version("3.0.0")
package io.etcfs.spi.lock;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
