package io.etcfs.spi.fencing;

import java.time.Duration;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Cuts a dead node off the shared device before its space is recovered. Registered with the
 * service property {@value #NAME}: {@code none} (rely on the lease, the grace period and the
 * device heartbeat), {@code exec} (an external command), {@code reservation} (SCSI-3 / NVMe
 * persistent reservations).
 */
@ConsumerType
public interface FenceAgent {
  String NAME = "etcfs.fence.agent";

  String name();

  /**
   * Fences {@code node} (incarnation {@code generation}). Returns normally only if the node is
   * known to be cut off, or, for {@code none}, if nothing was asked of the agent.
   *
   * @throws FenceException if fencing failed or did not finish within {@code timeout}
   */
  void fence(String node, long generation, Duration timeout) throws FenceException;
}
