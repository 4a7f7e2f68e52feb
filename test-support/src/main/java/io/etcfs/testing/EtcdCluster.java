package io.etcfs.testing;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.etcd.local.EtcdProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The private etcd cluster of a test class, as {@link EtcdExtension} hands it to tests. Stores
 * made with {@link #newStore()} are closed by the extension after the class.
 */
public final class EtcdCluster {
  private final EtcdProcess process;
  private final Path dataDir;
  private final List<EtcdMetaStore> stores = new ArrayList<>();

  EtcdCluster(EtcdProcess process, Path dataDir) {
    this.process = process;
    this.dataDir = dataDir;
  }

  /** The client URLs, comma separated. */
  public String endpoints() {
    return process.endpoints();
  }

  public EtcdProcess process() {
    return process;
  }

  public Path dataDir() {
    return dataDir;
  }

  public EtcdSettings settings() {
    return EtcdSettings.of(endpoints());
  }

  /** A new connected store on this cluster. */
  public synchronized EtcdMetaStore newStore() {
    EtcdMetaStore store = EtcdMetaStore.connect(settings());
    stores.add(store);
    return store;
  }

  synchronized void closeStores() {
    RuntimeException first = null;
    for (EtcdMetaStore store : stores) {
      try {
        store.close();
      } catch (RuntimeException e) {
        first = first == null ? e : first;
      }
    }
    stores.clear();
    if (first != null) {
      throw first;
    }
  }
}
