/**
 * Keeping a store lease alive with a deadline of one's own: shared by every part that holds
 * keys under a lease (membership, lock sessions), so that each computes its deadline from when
 * it sent the last acknowledged renewal, on a monotonic clock, the same way.
 */
@Export
@Version("1.2.0")
package io.etcfs.spi.lease;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
