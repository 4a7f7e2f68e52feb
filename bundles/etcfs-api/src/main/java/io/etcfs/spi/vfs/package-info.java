/**
 * The filesystem as a front end sees it: inode-addressed POSIX operations with errno failures.
 * Implemented by etcfs-core; consumed by the FUSE front end (and any other front end). Every
 * operation either completes or fails with an {@link FsException} carrying the errno the caller
 * must see; nothing here blocks without bound.
 */
@Export
@Version("1.6.0")
package io.etcfs.spi.vfs;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
