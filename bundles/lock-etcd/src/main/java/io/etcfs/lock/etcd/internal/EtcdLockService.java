package io.etcfs.lock.etcd.internal;

import io.etcfs.spi.lock.HeldLock;
import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.lock.LockService;
import io.etcfs.spi.lock.LockSession;
import io.etcfs.spi.lock.RecallHandler;
import io.etcfs.spi.meta.MetaStore;
import java.time.Duration;
import java.util.Objects;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * Inode locks held in etcd under a short lock-session lease. This stage registers the backend
 * so the core can select it and the configuration is checked; the lock algorithm itself (a
 * lease-backed session, lock keys whose create revision is the fencing token, recall through
 * watches) is issue #4.
 */
@Component(
    service = LockService.class,
    configurationPid = EtcdLockService.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = LockService.BACKEND + "=" + EtcdLockService.BACKEND_NAME)
@Designate(ocd = EtcdLockService.Config.class)
public final class EtcdLockService implements LockService {
  static final String PID = "io.etcfs.lock.etcd";
  static final String BACKEND_NAME = "etcd";
  static final String NOT_YET = "inode locks on etcd are built in issue #4 (lock-etcd)";

  @ObjectClassDefinition(
      name = "etcfs lock backend: etcd",
      description = "Inode locks held in etcd under a short lock-session lease.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();

    @AttributeDefinition(description = "This node's name, unique in the cluster.")
    String nodeName();

    @AttributeDefinition(
        description = "TTL of the lock-session lease; bounds the takeover of a dead node's locks.")
    int sessionTtlSeconds() default 2;
  }

  private final MetaStore store;
  private final String fsName;
  private final String nodeName;
  private final Duration sessionTtl;
  private volatile RecallHandler recallHandler;

  @Activate
  public EtcdLockService(@Reference(name = "metaStore") MetaStore store, Config config) {
    this.store = Objects.requireNonNull(store, "store");
    this.fsName = required("fsName", config.fsName());
    this.nodeName = required("nodeName", config.nodeName());
    this.sessionTtl = sessionTtl(config.sessionTtlSeconds());
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
  public void setRecallHandler(RecallHandler handler) {
    recallHandler = Objects.requireNonNull(handler, "handler");
  }

  RecallHandler recallHandler() {
    return recallHandler;
  }

  Duration sessionTtl() {
    return sessionTtl;
  }

  @Override
  public String toString() {
    return "etcd locks of " + fsName + " for " + nodeName + " on " + store.describe();
  }

  private static String required(String name, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(PID + ": " + name + " is not set");
    }
    return value;
  }

  private static Duration sessionTtl(int seconds) {
    if (seconds < 1) {
      throw new IllegalArgumentException(
          PID + ": sessionTtlSeconds must be at least 1, was " + seconds);
    }
    return Duration.ofSeconds(seconds);
  }
}
