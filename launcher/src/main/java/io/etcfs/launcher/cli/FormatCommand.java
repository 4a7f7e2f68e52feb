package io.etcfs.launcher.cli;

import io.etcfs.core.format.FormatException;
import io.etcfs.core.format.Formatter;
import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.launcher.UserError;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "format", mixinStandardHelpOptions = true,
    description = "Write a new etcfs onto DEVICE and create its record in etcd.")
final class FormatCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "DEVICE",
      description = "Block device or image file (created sparse with --size).")
  Path device;

  @Mixin EtcdOptions etcd;

  @Option(names = "--size", paramLabel = "SIZE", converter = Units.Size.class,
      description = "Create or grow an image file to SIZE (e.g. 8G).")
  long size;

  @Option(names = "--name", paramLabel = "FS", defaultValue = "etcfs",
      description = "Filesystem name, its etcd prefix (default: ${DEFAULT-VALUE}).")
  String name;

  @Option(names = "--arena-size", paramLabel = "SIZE", converter = Units.Size.class,
      defaultValue = "64M", description = "Arena size (default: ${DEFAULT-VALUE}).")
  long arenaSize;

  @Option(names = "--force", description = "Overwrite an existing etcfs on DEVICE or in etcd.")
  boolean force;

  @Option(names = "--lock", paramLabel = "BACKEND", defaultValue = Backends.DEFAULT_LOCK,
      description = "Inode lock backend every node will use (default: ${DEFAULT-VALUE}).")
  String lock;

  @Option(names = "--alloc", paramLabel = "ALLOCATOR", defaultValue = Backends.DEFAULT_ALLOC,
      description = "Block allocator every node will use (default: ${DEFAULT-VALUE}).")
  String alloc;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    if (arenaSize % Formatter.BLOCK_SIZE != 0) {
      throw new UserError("--arena-size must be a multiple of " + Formatter.BLOCK_SIZE);
    }
    // Checked before etcd or the device is touched: a bad name is bad usage, and nothing of it
    // may be left behind.
    try {
      Path bundles = Home.dir().resolve("bundle");
      Backends.lock(lock, bundles);
      Backends.alloc(alloc, bundles);
    } catch (UserError e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    try (EtcdMetaStore store = etcd.connect()) {
      FsRecord r = new Formatter(store, System.out::println).format(
          new Formatter.Options(device.toAbsolutePath(), size, name, force, arenaSize, lock,
              alloc));
      System.out.println("record " + Keyspace.of(name).key(Keyspace.RECORD) + " written to etcd at "
          + store.describe());
      System.out.println("mount it with: etcfs mount " + device.toAbsolutePath()
          + " MOUNTPOINT --etcd " + etcd.endpoints() + etcd.cliTail()
          + (name.equals("etcfs") ? "" : " --name " + name));
      System.out.println("undo: etcdctl --endpoints " + etcd.endpoints() + etcd.etcdctlTail()
          + " del --prefix "
          + Keyspace.of(name).root() + "   (the device keeps its superblock until formatted again)");
      return r == null ? 1 : 0;
    } catch (FormatException e) {
      throw new UserError(e.getMessage());
    }
  }
}
