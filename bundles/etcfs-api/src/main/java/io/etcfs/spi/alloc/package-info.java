/**
 * The block allocation SPI: a node allocates device blocks for file data from space it
 * owns. Implemented by {@code alloc-arena}.
 */
@Export
@Version("1.3.0")
package io.etcfs.spi.alloc;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
