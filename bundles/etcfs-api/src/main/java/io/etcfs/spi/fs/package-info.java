/**
 * The filesystem's identity and keyspace, one definition for the core, every plug-in and the CLI:
 * the filesystem record in etcd ({@link FsRecord}) and where each part keeps its keys ({@link
 * Keyspace}); 1.1: the core's inode fence ({@link InodeFence}); 1.3: the live switch's areas.
 * docs/ARCHITECTURE.md ("The etcd keyspace") lists every key.
 */
@Export
@Version("1.3.0")
package io.etcfs.spi.fs;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
