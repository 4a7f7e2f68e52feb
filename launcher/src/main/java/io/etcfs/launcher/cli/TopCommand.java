package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.UserError;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.KeyValue;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code etcfs top}: the cluster's live rates per node, for an operator without Prometheus. The
 * nodes are the filesystem's members in etcd; each member record names the node's metrics
 * address (nodes started with {@code --metrics}), which is scraped twice an interval apart: the
 * rates are the differences. A node without metrics, or one that does not answer, is listed as
 * such.
 */
@Command(name = "top", mixinStandardHelpOptions = true,
    description = "Show every node's live rates (operations, errors, latency, device and etcd"
        + " traffic, lock waits and recalls, lease), refreshing; nodes need --metrics.")
final class TopCommand implements Callable<Integer> {
  @Mixin EtcdOptions etcd;

  @Option(names = "--dir", paramLabel = "DIR", description = "A local cluster made by 'etcfs up'.")
  Path dir;

  @Option(names = "--name", paramLabel = "FS", description = "Filesystem name (default: etcfs).")
  String name;

  @Option(names = "--interval", paramLabel = "SECONDS", defaultValue = "2",
      description = "Seconds between refreshes (default: ${DEFAULT-VALUE}).")
  double interval;

  @Option(names = "--once", description = "Print one table (rates over one interval) and exit.")
  boolean once;

  @Override
  public Integer call() throws Exception {
    if (!(interval >= 0.1 && interval <= 3600)) {
      throw new UserError("--interval must be between 0.1 and 3600 seconds, not " + interval);
    }
    EtcdOptions.Filesystem fs = etcd.filesystem(dir, name);
    Duration every = Duration.ofMillis(Math.round(interval * 1000));
    boolean terminal = System.console() != null && !once;
    try (EtcdMetaStore store = EtcdOptions.connect(fs.connection())) {
      Map<String, String> nodes = nodes(store, fs.name());
      Map<String, Scrape> before = scrapeAll(nodes, every);
      while (true) {
        Thread.sleep(every.toMillis());
        nodes = nodes(store, fs.name()); // nodes join and leave
        Map<String, Scrape> after = scrapeAll(nodes, every);
        String table = TopTable.render(fs.name(), nodes, before, after, interval,
            LocalTime.now().truncatedTo(ChronoUnit.SECONDS));
        PrintStream out = System.out;
        if (terminal) {
          out.print("\033[H\033[2J"); // home, clear: redraw in place, as top does
        }
        out.print(table);
        out.flush();
        if (once) {
          return 0;
        }
        before = after;
      }
    }
  }

  /** Every member's metrics address by node name, "" for a node that has none. */
  private static Map<String, String> nodes(EtcdMetaStore store, String fs) {
    Keyspace keys = Keyspace.of(fs);
    if (store.get(keys.record()).isEmpty()) {
      throw new UserError("no filesystem '" + fs + "' in etcd at " + store.describe());
    }
    Map<String, String> nodes = new LinkedHashMap<>();
    List<KeyValue> members = store.prefix(keys.bytes(Keyspace.MEMBERS), 0).kvs();
    for (KeyValue kv : members) {
      String node = kv.keyString().substring(kv.keyString().lastIndexOf('/') + 1);
      Properties p = MemberRecords.parse(kv.valueString()).orElseGet(Properties::new);
      nodes.put(node, p.getProperty("metrics", ""));
    }
    return nodes;
  }

  private static Map<String, Scrape> scrapeAll(Map<String, String> nodes, Duration timeout)
      throws InterruptedException {
    Map<String, Scrape> out = new LinkedHashMap<>();
    for (Map.Entry<String, String> n : nodes.entrySet()) {
      if (n.getValue().isEmpty()) {
        continue;
      }
      try {
        out.put(n.getKey(), Scrape.fetch(n.getValue(), timeout.compareTo(Duration.ofSeconds(2))
            < 0 ? Duration.ofSeconds(2) : timeout));
      } catch (java.io.IOException | IllegalArgumentException e) {
        // listed as not answering
      }
    }
    return out;
  }
}
