package io.etcfs.etcd.internal;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchListener;
import io.etcfs.spi.metrics.MetricSource;
import io.etcfs.support.meta.ForwardingMetaStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.AttributeType;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The etcd {@link MetaStore} service, configured under PID {@code io.etcfs.etcd}. Activation
 * connects and fails (with the one-line reason) when etcd cannot be used, so that no consumer
 * ever binds a store that does not work. It is immediate so that this happens (and is logged)
 * when the configuration is set, not at the first use. Every call goes to the connected
 * {@link EtcdMetaStore}.
 */
@Component(
    configurationPid = "io.etcfs.etcd",
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    service = MetaStore.class,
    property = "etcfs.store=etcd",
    immediate = true)
@Designate(ocd = EtcdClientComponent.Config.class)
public final class EtcdClientComponent extends ForwardingMetaStore {

  /** The configuration of PID {@code io.etcfs.etcd}. */
  @ObjectClassDefinition(name = "etcfs etcd client", description = "How to reach etcd")
  public @interface Config {
    @AttributeDefinition(description = "Client URLs, comma separated: http(s)://host:port,...")
    String endpoints();

    @AttributeDefinition(description = "CA bundle (PEM); enables TLS", required = false)
    String caFile() default "";

    @AttributeDefinition(description = "Client certificate (PEM)", required = false)
    String certFile() default "";

    @AttributeDefinition(description = "Client key (unencrypted PKCS#8 PEM)", required = false)
    String keyFile() default "";

    @AttributeDefinition(description = "etcd user, when etcd auth is on", required = false)
    String user() default "";

    /**
     * The property is {@code .password}: a leading dot keeps it out of the service properties,
     * where every bundle could read it.
     */
    @AttributeDefinition(type = AttributeType.PASSWORD, required = false)
    String _password() default "";

    @AttributeDefinition(description = "Bound on every etcd request, in milliseconds", min = "1")
    long requestTimeoutMs() default 5000;
  }

  private final RoundTrips trips = new RoundTrips();
  private final ServiceRegistration<MetricSource> metrics;

  @Activate
  public EtcdClientComponent(Config config, BundleContext context) {
    super(EtcdMetaStore.connect(settings(config)));
    this.metrics = context.registerService(MetricSource.class, trips, null);
  }

  @Override
  public Optional<KeyValue> get(byte[] key) {
    return trips.time(RoundTrips.GET, () -> delegate.get(key));
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    return trips.time(RoundTrips.RANGE, () -> delegate.range(from, to, limit));
  }

  @Override
  public TxnResult commit(Txn txn) {
    return trips.time(RoundTrips.TXN, () -> delegate.commit(txn));
  }

  @Override
  public Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
    trips.watchStarted();
    return delegate.watch(prefix, fromRevision, listener);
  }

  @Override
  public long grantLease(Duration ttl) {
    return trips.time(RoundTrips.LEASE_GRANT, () -> delegate.grantLease(ttl));
  }

  @Override
  public long keepAliveOnce(long lease) {
    return trips.time(RoundTrips.LEASE_KEEPALIVE, () -> delegate.keepAliveOnce(lease));
  }

  @Override
  public long leaseTimeToLive(long lease) {
    return trips.time(RoundTrips.LEASE_TTL, () -> delegate.leaseTimeToLive(lease));
  }

  @Override
  public void revokeLease(long lease) {
    trips.time(RoundTrips.LEASE_REVOKE, () -> {
      delegate.revokeLease(lease);
      return null;
    });
  }

  static EtcdSettings settings(Config config) {
    return new EtcdSettings(
        EtcdSettings.parseEndpoints(config.endpoints()),
        path(config.caFile()),
        path(config.certFile()),
        path(config.keyFile()),
        blankToNull(config.user()),
        blankToNull(config._password()),
        Duration.ofMillis(config.requestTimeoutMs()));
  }

  @Deactivate
  void deactivate() {
    try {
      metrics.unregister();
    } catch (IllegalStateException e) {
      // already gone with the bundle
    }
    ((EtcdMetaStore) delegate).close();
  }

  private static Path path(String value) {
    return value == null || value.isBlank() ? null : Path.of(value.strip());
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value;
  }
}
