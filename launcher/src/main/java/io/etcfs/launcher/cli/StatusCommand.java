package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.UserError;
import io.etcfs.spi.alloc.BlockOwner;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.KeyValue;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "status", mixinStandardHelpOptions = true,
    description = "Show a filesystem: members, arenas, space, lock and allocator backends.")
final class StatusCommand implements Callable<Integer> {
  @Mixin EtcdOptions etcd;

  @Option(names = "--dir", paramLabel = "DIR", description = "A local cluster made by 'etcfs up'.")
  Path dir;

  @Option(names = "--name", paramLabel = "FS", description = "Filesystem name (default: etcfs).")
  String name;

  @Override
  public Integer call() throws IOException {
    EtcdOptions.Filesystem fs = etcd.filesystem(dir, name);
    try (EtcdMetaStore store = EtcdOptions.connect(fs.connection())) {
      print(store, fs.name());
    }
    return 0;
  }

  private void print(EtcdMetaStore store, String fs) {
    Keyspace keys = Keyspace.of(fs);
    FsRecord r = store.get(keys.record()).map(kv -> FsRecord.decode(kv.value()))
        .orElseThrow(() -> new UserError("no filesystem '" + fs + "' in etcd at " + store.describe()));
    long claimed = store.prefix(keys.bytes(Keyspace.ARENAS), 0).kvs().size();
    System.out.printf("filesystem  %s (uuid %s, formatted %s)%n", fs, r.uuid(), r.formatted());
    System.out.printf("etcd        %s%n", store.settings().describeEndpoints());
    System.out.printf("device      %s, block size %d, data from %s%n", Units.human(r.deviceSize()),
        r.blockSize(), Units.human(r.dataStart()));
    System.out.printf("backends    lock=%s  alloc=%s%n", r.lockBackend(), r.allocBackend());
    if (r.allocBackend().equals("arena")) {
      System.out.printf("arenas      %d of %s: %d claimed, %d unclaimed%n", r.arenas(),
          Units.human(r.arenaSize()), claimed, r.arenas() - claimed);
    }
    long total = r.arenas() * r.arenaSize();
    // from the block ownership records, which every allocator writes the same way
    long used = usedBytes(store, fs, r.blockSize());
    System.out.printf("space       %s of data: %s used, %s free (%d%% used)%n", Units.human(total),
        Units.human(used), Units.human(total - used), total == 0 ? 0 : used * 100 / total);
    List<KeyValue> members = store.prefix(keys.bytes(Keyspace.MEMBERS), 0).kvs();
    System.out.printf("members     %d%n", members.size());
    if (!members.isEmpty()) {
      System.out.printf("  %-16s %10s  %-16s %8s  %s%n", "NODE", "GENERATION", "HOST", "PID",
          "MOUNTPOINT");
      for (KeyValue kv : members) {
        Properties p = parse(kv);
        String node = kv.keyString().substring(kv.keyString().lastIndexOf('/') + 1);
        System.out.printf("  %-16s %10d  %-16s %8s  %s%n", node, kv.createRevision(),
            p.getProperty("host", "?"), p.getProperty("pid", "?"), p.getProperty("mountpoint", "?"));
      }
    }
  }

  /**
   * The bytes referenced by committed extents: the sum of the block ownership records, which
   * every allocator keeps the same way (the API's {@link BlockOwner}).
   */
  private static long usedBytes(EtcdMetaStore store, String fs, int blockSize) {
    Keyspace space = Keyspace.of(fs);
    long blocks = 0;
    for (KeyValue kv : store.prefix(BlockOwner.prefix(space), 0).kvs()) {
      BlockOwner o = BlockOwner.decode(space, kv.key(), kv.value());
      blocks += o == null ? 0 : o.length();
    }
    return blocks * blockSize;
  }

  private static Properties parse(KeyValue kv) {
    return MemberRecords.parse(kv.valueString())
        .orElseThrow(() -> new UserError("corrupt member record " + kv.keyString()));
  }
}
