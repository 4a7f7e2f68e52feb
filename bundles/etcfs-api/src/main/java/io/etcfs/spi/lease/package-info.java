/**
 * Leases with a deadline of one's own ({@link Deadline}: from when the last acknowledged renewal
 * was sent, on a monotonic clock) and their report to the shell. 2.0: the keeper itself
 * ({@code io.etcfs.support.lease.LeaseKeeper}) left the API; each bundle includes it privately.
 */
@Export
@Version("2.0.0")
package io.etcfs.spi.lease;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
