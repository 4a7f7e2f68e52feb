package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.FenceAgent;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;

/**
 * The fence agent for devices that offer no way to cut a node off (a file, a loop device, a LUN
 * without persistent reservations). Its contract is that nothing is asked of it, so returning
 * normally is the honest answer. It does not wait: the grace period in which the dead node's own
 * self-fence must have taken effect, and the check that its device heartbeat stopped, belong to
 * the recovery path (issue #5), which runs them whatever agent is configured.
 */
@Component(
    service = FenceAgent.class,
    configurationPid = NoneFenceAgent.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL,
    property = FenceAgent.NAME + "=" + NoneFenceAgent.AGENT_NAME)
public final class NoneFenceAgent implements FenceAgent {
  static final String PID = "io.etcfs.fence.none";
  static final String AGENT_NAME = "none";
  private static final Logger LOG = System.getLogger(NoneFenceAgent.class.getName());

  @Override
  public String name() {
    return AGENT_NAME;
  }

  @Override
  public void fence(String node, long generation, Duration timeout) {
    LOG.log(Level.INFO,
        "fence agent none: nothing to do for {0} generation {1}; recovery relies on the lease, "
            + "the grace period and the device heartbeat", node, generation);
  }
}
