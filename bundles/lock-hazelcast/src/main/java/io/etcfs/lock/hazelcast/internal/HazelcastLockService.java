package io.etcfs.lock.hazelcast.internal;

import io.etcfs.spi.lock.CreateGrant;
import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.lock.RecallHandler;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Inode locks on Hazelcast members embedded in each node, the backend that can be swapped in on
 * a live cluster. This stage starts the member; the locks themselves are the backend-swap issue.
 *
 * <p>Deliberately a delayed component (the default for a service): SCR activates it only when a
 * consumer gets the service, so no member starts, opens a port or looks for peers unless the core
 * selects this backend.
 */
@Component(
    service = LockService.class,
    configurationPid = HazelcastLockService.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = LockService.BACKEND + "=" + HazelcastLockService.BACKEND_NAME)
@Designate(ocd = HazelcastLockService.Config.class)
public final class HazelcastLockService implements LockService {
  static final String PID = "io.etcfs.lock.hazelcast";
  static final String BACKEND_NAME = "hazelcast";
  static final String NOT_YET =
      "inode locks on Hazelcast are built in the backend-swap issue (lock-hazelcast)";
  private static final Duration STOP_WAIT = Duration.ofSeconds(30);

  @ObjectClassDefinition(
      name = "etcfs lock backend: Hazelcast",
      description = "Inode locks on a Hazelcast cluster embedded in the nodes.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name; the cluster is etcfs-<fsName>.")
    String fsName();

    @AttributeDefinition(description = "This node's name, unique in the cluster.")
    String nodeName();

    @AttributeDefinition(description = "Members to join: comma-separated host or host:port.")
    String members() default "127.0.0.1";

    @AttributeDefinition(description = "The port this node's member listens on.")
    int port() default 5701;
  }

  private final HazelcastMember member;
  private volatile RecallHandler recallHandler;

  @Activate
  public HazelcastLockService(Config config) {
    String fsName = required("fsName", config.fsName());
    String nodeName = required("nodeName", config.nodeName());
    List<String> members = members(config.members());
    int port = port(config.port());
    member = HazelcastMember.start(HazelcastMember.config(fsName, nodeName, members, port));
  }

  @Deactivate
  void deactivate() {
    member.stop(STOP_WAIT);
  }

  @Override
  public String backend() {
    return BACKEND_NAME;
  }

  @Override
  public LockSession session() {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public HeldLock acquire(long inode, LockMode mode, Duration timeout) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public void release(HeldLock lock) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public CreateGrant createGrant(long inode) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public HeldLock adoptCreated(CreateGrant grant, long revision) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public void abandonCreated(CreateGrant grant) {
    throw new UnsupportedOperationException(NOT_YET);
  }

  @Override
  public void setRecallHandler(RecallHandler handler) {
    recallHandler = Objects.requireNonNull(handler, "handler");
  }

  RecallHandler recallHandler() {
    return recallHandler;
  }

  HazelcastMember member() {
    return member;
  }

  @Override
  public String toString() {
    return "Hazelcast locks on " + member;
  }

  /** Splits the configured member list; Hazelcast itself rejects port ranges in it. */
  static List<String> members(String value) {
    List<String> members =
        value == null
            ? List.of()
            : Arrays.stream(value.split(",")).map(String::trim).filter(m -> !m.isEmpty()).toList();
    if (members.isEmpty()) {
      throw new IllegalArgumentException(PID + ": members is empty");
    }
    return members;
  }

  private static int port(int port) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException(PID + ": port " + port + " is not a TCP port");
    }
    return port;
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }
}
