package io.etcfs.spi.metrics;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * What one bundle counts, written out on demand. Registered as a service; the exporter calls
 * {@link #collect} once per scrape, on the scraper's thread, so it must only read counters and
 * never wait on etcd or the device.
 */
@ConsumerType
public interface MetricSource {
  /** Writes this source's current values. */
  void collect(Metrics out);
}
