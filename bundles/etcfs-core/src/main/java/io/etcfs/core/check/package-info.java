/**
 * The filesystem check ({@code etcfs fsck}) as a library: {@link io.etcfs.core.check.FsSnapshot}
 * is every key of one filesystem read at one store revision, {@link
 * io.etcfs.core.check.FsChecker} finds what in it disagrees with itself (and with the device's
 * superblock), and {@link io.etcfs.core.check.FsRepair} plans and applies the fixes that need no
 * guess, each as a guarded transaction. Pure logic over the snapshot: the CLI reads the snapshot
 * from etcd at one revision, tests build it from the in-memory store.
 */
@Export
@Version("1.0.0")
package io.etcfs.core.check;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
