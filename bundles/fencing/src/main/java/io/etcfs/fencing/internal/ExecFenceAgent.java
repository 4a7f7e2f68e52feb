package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.FenceAgent;
import io.etcfs.spi.fencing.FenceException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Fences a dead node by running a configured command (typically a cloud or power API call that
 * stops or detaches the machine) and trusting its exit status: 0 means the node is cut off.
 *
 * <p>The command runs as {@code /bin/sh -c COMMAND} with {@code ETCFS_FENCE_ACTION=fence},
 * {@code ETCFS_FENCE_NODE}, {@code ETCFS_FENCE_GENERATION} and {@code ETCFS_FENCE_FS} in its
 * environment. One that does not finish in time is killed with its children: recovery must go
 * on, and reports the failure. {@code register}/{@code unregister} do nothing: the command acts on
 * the dead node's machine, not on the device.
 */
@Component(
    service = FenceAgent.class,
    configurationPid = ExecFenceAgent.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = FenceAgent.NAME + "=" + ExecFenceAgent.AGENT_NAME)
@Designate(ocd = ExecFenceAgent.Config.class)
public final class ExecFenceAgent implements FenceAgent {
  static final String PID = "io.etcfs.fence.exec";
  static final String AGENT_NAME = "exec";
  static final String SHELL = "/bin/sh";
  private static final Logger LOG = System.getLogger(ExecFenceAgent.class.getName());

  @ObjectClassDefinition(
      name = "etcfs fence agent exec",
      description = "Fences a dead node by running a command and trusting its exit status.")
  @interface Config {
    @AttributeDefinition(description = "Shell command line, run with /bin/sh -c; exit status 0 "
        + "means the node is cut off.")
    /**
     * The property is {@code .command}: a leading dot keeps it out of the service properties,
     * where any bundle could read a credential the command line carries.
     */
    String _command();

    @AttributeDefinition(description = "The filesystem's name, passed as ETCFS_FENCE_FS.")
    String fsName() default "";
  }

  private final String command;
  private final String fsName;

  @Activate
  public ExecFenceAgent(Config config) {
    this(config._command(), config.fsName());
  }

  ExecFenceAgent(String command, String fsName) {
    if (command == null || command.isBlank()) {
      throw new IllegalArgumentException(PID + ": command is missing or blank (the shell command "
          + "that fences a node)");
    }
    this.command = command;
    this.fsName = fsName == null ? "" : fsName;
  }

  @Override
  public String name() {
    return AGENT_NAME;
  }

  @Override
  public void fence(String node, long generation, Duration timeout) throws FenceException {
    String label = "fence command for " + node;
    LOG.log(Level.INFO, "fencing {0} generation {1}: {2} -c {3}", node, generation, SHELL, command);
    CommandRunner.Result r = CommandRunner.run(label, List.of(SHELL, "-c", command),
        environment(node, generation), new TimeBudget(timeout), SHELL + " not found");
    if (r.exit() != 0) {
      throw new FenceException(label + " (generation " + generation + ") exited with status "
          + r.exit() + ": " + r.lastErrLine());
    }
    LOG.log(Level.INFO, "fence command confirmed {0} generation {1} cut off", node, generation);
  }

  private Map<String, String> environment(String node, long generation) {
    return Map.of(
        "ETCFS_FENCE_ACTION", "fence",
        "ETCFS_FENCE_NODE", node,
        "ETCFS_FENCE_GENERATION", Long.toString(generation),
        "ETCFS_FENCE_FS", fsName);
  }
}
