/**
 * The filesystem's identity and keyspace, one definition for the core, every plug-in and the CLI:
 * the filesystem record in etcd ({@link FsRecord}) and where each part keeps its keys ({@link
 * Keyspace}); 1.1: the core's inode fence ({@link InodeFence}). docs/ARCHITECTURE.md ("The etcd keyspace") lists every key.
 */
@Export
@Version("1.2.0")
package io.etcfs.spi.fs;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
