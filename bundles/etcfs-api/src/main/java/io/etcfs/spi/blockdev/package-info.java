/**
 * The block device SPI: positional reads and writes on the shared device, and its
 * superblock.
 */
@Export
@Version("1.1.0")
package io.etcfs.spi.blockdev;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
