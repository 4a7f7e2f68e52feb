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
   * Called once this node has joined as {@code generation}, before it writes the device. Agents
   * that fence at the device itself (persistent reservations) register this incarnation's key
   * here; the others have nothing to do.
   *
   * @throws FenceException if the node cannot be registered; the join then fails
   */
  default void register(String node, long generation, Duration timeout) throws FenceException {}

  /**
   * Called on a clean leave, after the node's last device write: withdraws what
   * {@link #register} set up. Failure is logged, never fatal (recovery would fence the key).
   */
  default void unregister(String node, long generation, Duration timeout) throws FenceException {}

  /**
   * Fences {@code node} (incarnation {@code generation}). Returns normally only if the node is
   * known to be cut off, or, for {@code none}, if nothing was asked of the agent.
   *
   * @throws FenceException if fencing failed or did not finish within {@code timeout}
   */
  void fence(String node, long generation, Duration timeout) throws FenceException;
}
