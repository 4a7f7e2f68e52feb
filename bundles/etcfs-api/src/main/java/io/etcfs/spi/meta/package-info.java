/**
 * The metadata store SPI: an etcd-shaped key-value store with multi-key compare-and-set
 * transactions, leases and watches. The core and every plug-in keep their shared state through
 * it; the {@code etcd-client} bundle implements it on jetcd, and tests use an in-memory engine.
 * Nothing here names an etcd type. 2.0: the forwarding base class ({@code
 * io.etcfs.support.meta.ForwardingMetaStore}) left the API; each bundle includes it privately.
 * 2.1: compares below and above on revisions and values ({@link Compare.Target}).
 */
@Export
@Version("2.1.0")
package io.etcfs.spi.meta;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
