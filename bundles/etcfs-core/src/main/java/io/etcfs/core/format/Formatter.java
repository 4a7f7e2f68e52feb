package io.etcfs.core.format;

import io.etcfs.core.device.FileBlockDevice;
import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.vfs.Vfs;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Formats a device: writes its superblock and zeroed heartbeat slots, then creates the
 * filesystem record in etcd. Refuses, with a one-line {@link FormatException}, a device that
 * already holds an etcfs or a name already formatted (unless forced), a device too small for one
 * arena, and a filesystem that still has live members (even when forced).
 */
public final class Formatter {
  public static final int BLOCK_SIZE = 4096;
  public static final long DEFAULT_ARENA_SIZE = 64L << 20;
  /** Superblock plus the device heartbeat slots of one block each. */
  public static final long DATA_START = io.etcfs.spi.blockdev.DeviceLayout.DATA_START;

  /**
   * What to format.
   *
   * @param device the device node or image file
   * @param createSize the size of an image file to create or grow to, or 0 to use the device as
   *     it is
   * @param name the filesystem's name
   * @param force whether to overwrite an existing etcfs
   * @param arenaSize the arena size in bytes
   */
  /**
   * @param lockBackend the inode lock backend the record names
   * @param allocBackend the allocator the record names
   */
  public record Options(Path device, long createSize, String name, boolean force, long arenaSize,
      String lockBackend, String allocBackend) {
    /** With the default backends: etcd locks, arena allocation. */
    public Options(Path device, long createSize, String name, boolean force, long arenaSize) {
      this(device, createSize, name, force, arenaSize, "etcd", "arena");
    }
  }

  private final MetaStore store;
  private final Consumer<String> progress;

  public Formatter(MetaStore store, Consumer<String> progress) {
    this.store = store;
    this.progress = progress;
  }

  public FsRecord format(Options o) throws IOException, FormatException {
    FsKeys keys = new FsKeys(o.name());
    long size = prepareDevice(o);
    if (size < DATA_START + o.arenaSize()) {
      throw new FormatException(
          "device " + o.device() + " is too small: " + size + " bytes, one arena needs "
              + (DATA_START + o.arenaSize()));
    }
    refuseExisting(o, keys);
    Superblock sb =
        new Superblock(UUID.randomUUID(), BLOCK_SIZE, o.arenaSize(), size, DATA_START, o.name());
    FsRecord record = sb.record(o.lockBackend(), o.allocBackend(), Instant.now());
    writeDevice(o.device(), sb);
    commitRecord(keys, record, o.force());
    progress.accept(
        "formatted " + o.device() + " as '" + o.name() + "' (uuid " + sb.uuid() + ", "
            + sb.arenaCount() + " arenas of " + (o.arenaSize() >> 20) + " MiB; lock backend "
            + o.lockBackend() + ", allocator " + o.allocBackend() + ")");
    return record;
  }

  private long prepareDevice(Options o) throws IOException, FormatException {
    Path dev = o.device();
    if (!Files.exists(dev)) {
      if (o.createSize() <= 0) {
        throw new FormatException(
            "device " + dev + " does not exist (give --size to create an image file)");
      }
      progress.accept("creating sparse image " + dev + " of " + o.createSize() + " bytes");
    } else if (Files.isDirectory(dev)) {
      throw new FormatException("device " + dev + " is a directory");
    }
    if (o.createSize() > 0 && (!Files.exists(dev) || Files.isRegularFile(dev))) {
      try (RandomAccessFile f = new RandomAccessFile(dev.toFile(), "rw")) {
        if (f.length() < o.createSize()) {
          f.setLength(o.createSize());
        }
      }
    }
    try (FileBlockDevice d = FileBlockDevice.openReadOnly(dev)) {
      return d.size();
    }
  }

  private void refuseExisting(Options o, FsKeys keys) throws IOException, FormatException {
    ByteBuffer head = ByteBuffer.allocate(Superblock.SIZE);
    try (FileBlockDevice d = FileBlockDevice.openReadOnly(o.device())) {
      d.read(head, 0);
    }
    head.flip();
    if (Superblock.hasMagic(head) && !o.force()) {
      throw new FormatException(
          "device " + o.device() + " already holds an etcfs filesystem (use --force to overwrite it)");
    }
    if (store.get(keys.record()).isPresent() && !o.force()) {
      throw new FormatException(
          "filesystem '" + o.name() + "' already exists in etcd at " + store.describe()
              + " (use --force to replace it)");
    }
    List<KeyValue> members = store.prefix(keys.membersPrefix(), 0).kvs();
    if (!members.isEmpty()) {
      String names = members.stream().map(KeyValue::keyString).map(Formatter::lastSegment)
          .reduce((a, b) -> a + ", " + b).orElse("");
      throw new FormatException(
          "filesystem '" + o.name() + "' has live members (" + names + "): unmount them first");
    }
  }

  private void writeDevice(Path device, Superblock sb) throws IOException {
    try (FileBlockDevice d = FileBlockDevice.open(device)) {
      // Zero the heartbeat slots so that no stale heartbeat from an earlier filesystem on the
      // device can look like a live node.
      d.write(ByteBuffer.allocate((int) (DATA_START - Superblock.SIZE)), Superblock.SIZE);
      d.write(sb.encode(), 0);
      d.flush();
    }
  }

  /**
   * One transaction creates the record, the root directory (inode 1) and the inode counter, so a
   * formatted filesystem is never without its root.
   */
  private void commitRecord(FsKeys keys, FsRecord record, boolean force) throws FormatException {
    long now = record.formatted().getEpochSecond() * 1_000_000_000L + record.formatted().getNano();
    java.util.TreeMap<byte[], byte[]> puts = new java.util.TreeMap<>(java.util.Arrays::compareUnsigned);
    puts.put(keys.record(), record.encode());
    puts.put(keys.inode(Vfs.ROOT), Codec.inode(Inode.root(now)));
    puts.put(keys.inoNext(), "2".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    Txn txn = new Txn();
    if (force) {
      // etcd rejects a transaction whose put falls inside one of its delete ranges, so delete
      // everything of the old filesystem in the gaps between the keys written here.
      byte[] from = keys.prefix();
      for (byte[] key : puts.keySet()) {
        txn.then(new Op.Delete(from, key));
        from = Keys.after(key);
      }
      txn.then(new Op.Delete(from, Keys.prefixEnd(keys.prefix())));
    } else {
      txn.when(Compare.absent(keys.record()));
    }
    puts.forEach((k, v) -> txn.then(Op.put(k, v)));
    if (!store.commit(txn).succeeded()) {
      throw new FormatException(
          "filesystem '" + record.name() + "' was created or joined concurrently;"
              + " nothing was changed in etcd (the device superblock was rewritten: format again)");
    }
  }

  private static String lastSegment(String key) {
    return key.substring(key.lastIndexOf('/') + 1);
  }
}
