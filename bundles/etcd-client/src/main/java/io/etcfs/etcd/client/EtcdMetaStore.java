package io.etcfs.etcd.client;

import static io.etcfs.etcd.client.JetcdConversions.bytes;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchListener;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The {@link MetaStore} on etcd through jetcd. Every request is bounded by the settings' request
 * timeout, and every jetcd call runs with this bundle's class loader as the thread context loader
 * because vert.x 5 fails on a null one (which is what OSGi threads often have).
 */
public final class EtcdMetaStore implements MetaStore, AutoCloseable {
  /** Read once at connect time to prove that etcd answers and accepts the credentials. */
  private static final byte[] PROBE_KEY = Keys.of(io.etcfs.spi.fs.Keyspace.ROOT);

  private static final ClassLoader BUNDLE_LOADER = EtcdMetaStore.class.getClassLoader();

  private final EtcdSettings settings;
  private final EtcdErrors errors;
  private final Client client;
  private final ExecutorService watchDelivery;
  private volatile boolean closed;

  private EtcdMetaStore(EtcdSettings settings, Client client) {
    this.settings = settings;
    this.errors = new EtcdErrors(settings);
    this.client = client;
    this.watchDelivery = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "etcfs-etcd-watch");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Connects and checks with one bounded read that etcd answers.
   *
   * @throws MetaStoreException if etcd is unreachable, refuses the credentials or TLS identity,
   *     or does not answer within the request timeout; the message is one line naming the
   *     endpoints
   */
  public static EtcdMetaStore connect(EtcdSettings settings) {
    Client client = withBundleLoader(() -> JetcdClients.build(settings));
    EtcdMetaStore store = new EtcdMetaStore(settings, client);
    try {
      store.get(PROBE_KEY);
    } catch (RuntimeException e) {
      store.close();
      throw e;
    }
    return store;
  }

  public EtcdSettings settings() {
    return settings;
  }

  @Override
  public Optional<KeyValue> get(byte[] key) {
    GetResponse response = call(() -> client.getKVClient().get(bytes(key)));
    return response.getKvs().stream().findFirst().map(JetcdConversions::keyValue);
  }

  @Override
  public RangeResult range(byte[] from, byte[] to, int limit) {
    GetOption option = GetOption.builder()
        .withRange(JetcdConversions.rangeEnd(to))
        .withLimit(limit)
        .build();
    GetResponse response = call(() -> client.getKVClient().get(bytes(from), option));
    return new RangeResult(JetcdConversions.keyValues(response.getKvs()),
        response.getHeader().getRevision(), response.isMore());
  }

  /**
   * Keys in [{@code from}, {@code to}) as of {@code revision} (0: the current one), at most
   * {@code limit}. Not part of the SPI: a tool that reads more than one request may carry (the
   * filesystem check) pages at one pinned revision with it, so its pages add up to one
   * consistent snapshot. Fails with {@link Kind#COMPACTED} once etcd compacted that revision.
   */
  public RangeResult rangeAt(byte[] from, byte[] to, int limit, long revision) {
    GetOption option = GetOption.builder()
        .withRange(JetcdConversions.rangeEnd(to))
        .withLimit(limit)
        .withRevision(revision)
        .build();
    GetResponse response = call(() -> client.getKVClient().get(bytes(from), option));
    return new RangeResult(JetcdConversions.keyValues(response.getKvs()),
        revision != 0 ? revision : response.getHeader().getRevision(), response.isMore());
  }

  /** How many keys [{@code from}, {@code to}) holds as of {@code revision}, read without them. */
  public long countAt(byte[] from, byte[] to, long revision) {
    GetOption option = GetOption.builder()
        .withRange(JetcdConversions.rangeEnd(to))
        .withCountOnly(true)
        .withRevision(revision)
        .build();
    return call(() -> client.getKVClient().get(bytes(from), option)).getCount();
  }

  @Override
  public TxnResult commit(Txn txn) {
    TxnResponse response = call(() -> client.getKVClient().txn()
        .If(JetcdConversions.compares(txn.compares()))
        .Then(JetcdConversions.ops(txn.onSuccess()))
        .Else(JetcdConversions.ops(txn.onFailure()))
        .commit());
    long revision = response.getHeader().getRevision();
    List<RangeResult> ranges = response.getGetResponses().stream()
        .map(g -> new RangeResult(JetcdConversions.keyValues(g.getKvs()), revision, g.isMore()))
        .toList();
    return new TxnResult(response.isSucceeded(), revision, ranges);
  }

  @Override
  public Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
    checkOpen();
    try {
      return withBundleLoader(() -> EtcdWatch.start(client.getWatchClient(), prefix,
          fromRevision, listener, watchDelivery, errors));
    } catch (RuntimeException e) {
      throw e instanceof MetaStoreException m ? m : errors.map(e);
    }
  }

  @Override
  public long grantLease(Duration ttl) {
    long seconds = Math.max(1, (ttl.toMillis() + 999) / 1000);
    return call(() -> client.getLeaseClient().grant(seconds)).getID();
  }

  @Override
  public long keepAliveOnce(long lease) {
    return call(() -> client.getLeaseClient().keepAliveOnce(lease)).getTTL();
  }

  @Override
  public long leaseTimeToLive(long lease) {
    // etcd answers TTL -1 for a lease it does not know rather than an error.
    long ttl = call(() -> client.getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT)).getTTL();
    return ttl < 0 ? -1 : ttl;
  }

  @Override
  public void revokeLease(long lease) {
    try {
      call(() -> client.getLeaseClient().revoke(lease));
    } catch (MetaStoreException e) {
      if (e.kind() != Kind.LEASE_NOT_FOUND) {
        throw e;
      }
    }
  }

  /**
   * Compacts etcd's history up to {@code revision}: watches from an older revision then fail
   * with {@link Kind#COMPACTED}. Not part of the SPI; for administration and tests.
   */
  public void compact(long revision) {
    call(() -> client.getKVClient().compact(revision));
  }

  /**
   * The endpoints, as the SPI asks: callers write "in etcd at " before it, so saying "etcd at"
   * here too made "in etcd at etcd at URL".
   */
  @Override
  public String describe() {
    return settings.describeEndpoints();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    watchDelivery.shutdownNow();
    withBundleLoader(() -> {
      client.close();
      return null;
    });
  }

  private <T> T call(Supplier<CompletableFuture<T>> request) {
    NoWait.check(); // a round trip is a wait
    checkOpen();
    return withBundleLoader(() -> {
      CompletableFuture<T> future;
      try {
        future = request.get();
      } catch (RuntimeException e) {
        throw errors.map(e);
      }
      return await(future);
    });
  }

  private <T> T await(CompletableFuture<T> future) {
    try {
      return future.get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw errors.timeout();
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      throw new MetaStoreException(Kind.OTHER, "interrupted while waiting for " + errors.where());
    } catch (ExecutionException | RuntimeException e) {
      throw errors.map(e);
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new MetaStoreException(Kind.OTHER, "the client for " + errors.where() + " is closed");
    }
  }

  static <T> T withBundleLoader(Supplier<T> action) {
    Thread thread = Thread.currentThread();
    ClassLoader previous = thread.getContextClassLoader();
    thread.setContextClassLoader(BUNDLE_LOADER);
    try {
      return action.get();
    } finally {
      thread.setContextClassLoader(previous);
    }
  }
}
