/**
 * The format of an etcfs filesystem as a library: {@link io.etcfs.core.format.Formatter} writes a
 * device's superblock and creates the filesystem record and root directory in etcd; {@link
 * io.etcfs.core.format.FilesystemCheck} checks that a device and a record belong together; {@link
 * io.etcfs.core.format.Superblock} is the device's first block. The core uses it when it mounts;
 * the CLI, which runs outside the framework, uses it to format and to refuse a wrong device before
 * it starts a node. It and {@code io.etcfs.core.check} (the filesystem check) are the core
 * bundle's only exported packages, versioned like the API's: nothing else of the core is a
 * contract, and no code outside the core may compile against it.
 */
@Export
@Version("1.0.0")
package io.etcfs.core.format;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
