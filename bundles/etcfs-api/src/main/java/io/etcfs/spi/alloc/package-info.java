/**
 * The block allocation SPI: a node allocates device blocks for file data from space it
 * owns. Implemented by {@code alloc-arena}. 1.4: the block ownership record ({@link BlockOwner})
 * every allocator keeps, defined here so tools read it without knowing the allocator. 1.5:
 * {@link Allocator#STATE} and {@link Allocator#STANDBY}, for live switches of the allocator.
 */
@Export
@Version("1.5.0")
package io.etcfs.spi.alloc;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
