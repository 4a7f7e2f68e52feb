package io.etcfs.fencing.internal;

import static io.etcfs.fencing.internal.ReservationTool.hex;

import io.etcfs.fencing.internal.ReservationTool.Reservation;
import io.etcfs.fencing.internal.ReservationTool.Status;
import io.etcfs.spi.fencing.FenceAgent;
import io.etcfs.spi.fencing.FenceException;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Fences at the device with persistent reservations (SCSI-3 through {@code sg_persist}, NVMe
 * through {@code nvme resv-*}). Each incarnation registers its generation as its key; the device
 * carries a Write Exclusive – Registrants Only reservation, so only registered hosts can write.
 * Fencing a dead incarnation is a preempt-and-abort of its key: from then on the device itself
 * refuses that host's writes, including writes it had queued and writes it sends after waking up
 * from a pause. docs/fence-agents.md lists every command this agent runs.
 *
 * <p>The agent remembers the key {@link #register} gave it: fencing another node needs this
 * node's own key, and the agent cannot ask {@code Membership} for it (membership calls the agent).
 */
@Component(
    service = FenceAgent.class,
    configurationPid = ReservationFenceAgent.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = FenceAgent.NAME + "=" + ReservationFenceAgent.AGENT_NAME)
@Designate(ocd = ReservationFenceAgent.Config.class)
public final class ReservationFenceAgent implements FenceAgent {
  static final String PID = "io.etcfs.fence.reservation";
  static final String AGENT_NAME = "reservation";
  private static final Logger LOG = System.getLogger(ReservationFenceAgent.class.getName());

  @ObjectClassDefinition(
      name = "etcfs fence agent reservation",
      description = "Fences a dead node by preempting its persistent-reservation key.")
  @interface Config {
    @AttributeDefinition(description = "The shared device (the one the filesystem is on).")
    String device();

    @AttributeDefinition(description = "scsi, nvme, or auto: nvme for /dev/nvme*, else scsi.")
    String protocol() default "auto";

    @AttributeDefinition(description = "The sg_persist command (sg3-utils).")
    String sgPersist() default "sg_persist";

    @AttributeDefinition(description = "The nvme command (nvme-cli).")
    String nvme() default "nvme";
  }

  private final ReservationTool tool;
  private final AtomicLong ownKey = new AtomicLong();

  @Activate
  public ReservationFenceAgent(Config config) {
    this(tool(config.device(), config.protocol(), config.sgPersist(), config.nvme()));
  }

  ReservationFenceAgent(ReservationTool tool) {
    this.tool = tool;
  }

  static ReservationTool tool(String device, String protocol, String sgPersist, String nvme) {
    if (device == null || device.isBlank()) {
      throw new IllegalArgumentException(PID + ": device is not set");
    }
    return switch (protocol == null ? "auto" : protocol) {
      case "scsi" -> new ScsiReservations(sgPersist, device);
      case "nvme" -> new NvmeReservations(nvme, device);
      case "auto" -> isNvme(device) ? new NvmeReservations(nvme, device)
          : new ScsiReservations(sgPersist, device);
      default -> throw new IllegalArgumentException(
          PID + ": protocol must be scsi, nvme or auto (got '" + protocol + "')");
    };
  }

  /** By name, after following links: /dev/disk/by-id/nvme-… resolves to /dev/nvme0n1. */
  private static boolean isNvme(String device) {
    Path p = Path.of(device);
    try {
      p = p.toRealPath();
    } catch (IOException e) {
      // judged by the name as given
    }
    return p.toString().startsWith("/dev/nvme");
  }

  @Override
  public String name() {
    return AGENT_NAME;
  }

  /**
   * Registers this incarnation's key, then reserves the device if nobody has. Two nodes joining
   * at once may both find it unreserved; the loser's reserve fails, and it accepts the winner's
   * reservation after reading it back, as long as it is of the same type.
   */
  @Override
  public void register(String node, long generation, Duration timeout) throws FenceException {
    long key = key(generation);
    TimeBudget budget = new TimeBudget(timeout);
    Status before = tool.status(budget);
    if (!before.keys().contains(key)) {
      tool.register(key, budget);
    }
    if (before.reservation().isPresent()) {
      requireOurType(before.reservation().get());
    } else {
      reserveOrAccept(key, budget);
    }
    ownKey.set(key);
    LOG.log(Level.INFO, "{0} generation {1} registered key {2} on {3}", node, generation,
        hex(key), tool.device());
  }

  private void reserveOrAccept(long key, TimeBudget budget) throws FenceException {
    try {
      tool.reserve(key, budget);
    } catch (FenceException e) {
      Reservation won = tool.status(budget).reservation().orElseThrow(() -> e);
      requireOurType(won);
      LOG.log(Level.INFO, "{0} was reserved meanwhile by key {1}: joined that reservation",
          tool.device(), hex(won.holderKey()));
    }
  }

  private void requireOurType(Reservation r) throws FenceException {
    if (!r.writeExclusiveRegistrantsOnly()) {
      throw new FenceException(tool.device() + " carries a reservation of type '" + r.type()
          + "' (key " + hex(r.holderKey()) + "), not Write Exclusive - Registrants Only: is "
          + "something other than this cluster using the device?");
    }
  }

  /**
   * Preempts and aborts the dead incarnation's key. A key that is not registered any more was
   * fenced already (by an earlier recoverer) or left cleanly: success. Success is reported only
   * once a fresh read shows the key gone.
   */
  @Override
  public void fence(String node, long generation, Duration timeout) throws FenceException {
    long dead = key(generation);
    long ours = ownKey.get();
    if (ours == 0) {
      throw new FenceException("cannot fence " + node + ": this node has registered no "
          + "reservation key on " + tool.device() + " (register was not called)");
    }
    TimeBudget budget = new TimeBudget(timeout);
    Status s = tool.status(budget);
    if (!s.keys().contains(dead)) {
      LOG.log(Level.INFO, "{0} generation {1}: key {2} is not registered on {3}: already fenced "
          + "or left", node, generation, hex(dead), tool.device());
      return;
    }
    if (!s.keys().contains(ours)) {
      throw new FenceException("cannot fence " + node + ": this node's own key " + hex(ours)
          + " is no longer registered on " + tool.device() + " (was this node fenced itself?)");
    }
    tool.preemptAbort(ours, dead, budget);
    if (tool.status(budget).keys().contains(dead)) {
      throw new FenceException("key " + hex(dead) + " of " + node + " is still registered on "
          + tool.device() + " after preempt-and-abort");
    }
    LOG.log(Level.INFO, "{0} generation {1} fenced: key {2} preempted on {3}", node, generation,
        hex(dead), tool.device());
  }

  /**
   * Removes this incarnation's registration, except while its key holds the reservation. With a
   * Registrants Only reservation, unregistering (or releasing) the holder drops the reservation
   * itself (SPC-4 and NVMe agree), which would open the device to every host, fenced ones
   * included, until the next node joins. So the holder's key stays registered; this host's next
   * registration replaces it (and keeps the reservation), a recoverer never preempts it since the
   * incarnation left cleanly, and an operator can remove it by hand (docs/fence-agents.md).
   */
  @Override
  public void unregister(String node, long generation, Duration timeout) throws FenceException {
    long key = key(generation);
    TimeBudget budget = new TimeBudget(timeout);
    Status s = tool.status(budget);
    if (!s.keys().contains(key)) {
      LOG.log(Level.INFO, "{0}: key {1} is not registered on {2}: nothing to withdraw", node,
          hex(key), tool.device());
    } else if (s.reservation().map(r -> r.holderKey() == key).orElse(false)) {
      LOG.log(Level.INFO, "{0}: key {1} holds the reservation on {2}: it stays registered so "
          + "that fenced hosts stay locked out", node, hex(key), tool.device());
    } else {
      tool.unregister(key, budget);
      LOG.log(Level.INFO, "{0}: key {1} unregistered from {2}", node, hex(key), tool.device());
    }
    ownKey.compareAndSet(key, 0);
  }

  private static long key(long generation) {
    if (generation <= 0) {
      throw new IllegalArgumentException("generation must be positive: " + generation);
    }
    return generation;
  }
}
