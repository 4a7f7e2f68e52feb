/**
 * A node's metrics: each bundle that counts something registers a {@link MetricSource} (a
 * whiteboard service) and the node's exporter asks every one of them, at each scrape, to write
 * its current values into a {@link Metrics}. Sources keep their own counters (cheap adds on the
 * hot path); a scrape only reads them.
 */
@Export
@Version("1.0.0")
package io.etcfs.spi.metrics;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
