package io.etcfs.core.fs;

import io.etcfs.core.device.FileBlockDevice;
import io.etcfs.core.format.Formatter;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.testing.LocalLockService;
import io.etcfs.testing.MemoryMetaStore;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/** A formatted filesystem on a memory store and a temp image, with engines for "nodes". */
final class FsFixture implements AutoCloseable {
  static final String FS = "t";
  static final long ARENA = 16L << 20;

  final MemoryMetaStore store = new MemoryMetaStore();
  final FsKeys keys = new FsKeys(FS);
  final TestDevice device;
  final BitmapAllocator allocator;
  final LocalLockService.Table locks = new LocalLockService.Table();

  FsFixture(Path dir, long dataBytes) throws Exception {
    Path image = dir.resolve("device.img");
    long size = Formatter.DATA_START + Math.max(ARENA, dataBytes);
    new Formatter(store, m -> { }).format(
        new Formatter.Options(image, size, FS, false, Math.max(ARENA, dataBytes)));
    device = new TestDevice(FileBlockDevice.open(image));
    allocator = new BitmapAllocator(FS, Formatter.DATA_START / 4096, size / 4096);
  }

  /** A node: its membership key, and an engine with its own caches. */
  final class Node implements Membership {
    final String name;
    final long generation;
    final AtomicBoolean fenced = new AtomicBoolean();
    final EtcFs fs;
    final LocalLockService lockService;

    Node(String name, long buffer) {
      this(name, buffer, store);
    }

    Node(String name, long buffer, io.etcfs.spi.meta.MetaStore via) {
      this(name, buffer, via, store);
    }

    /** With {@code lockVia}: the store its lock service goes through. */
    Node(String name, long buffer, io.etcfs.spi.meta.MetaStore via,
        io.etcfs.spi.meta.MetaStore lockVia) {
      this.name = name;
      store.commit(new Txn().then(Op.put(keys.member(name), Keys.of("test"))));
      this.generation = store.get(keys.member(name)).orElseThrow().createRevision();
      this.lockService = new LocalLockService(locks, lockVia,
          "/etcfs/" + FS + "/locks/", name);
      this.fs = new EtcFs(via, FS, this, () -> allocator, () -> lockService, device, 4096,
          buffer);
    }

    @Override
    public String nodeName() {
      return name;
    }

    @Override
    public byte[] memberKey() {
      return keys.member(name);
    }

    @Override
    public long generation() {
      return generation;
    }

    @Override
    public boolean isFenced() {
      return fenced.get();
    }

    @Override
    public CompletionStage<Void> done() {
      return new CompletableFuture<>();
    }
  }

  Node node(String name) {
    return new Node(name, EtcFs.DEFAULT_BUFFER_BYTES);
  }

  Node node(String name, long buffer) {
    return new Node(name, buffer);
  }

  /**
   * Another node was granted {@code ino}'s exclusive lock and raised its fence (what a node whose
   * lock session expired finds): commits under this fixture's nodes' grants fail from now on.
   */
  void raiseElsewhere(long ino) {
    store.commit(new io.etcfs.spi.meta.Txn().then(io.etcfs.spi.meta.Op.put(keys.inodeFence(ino),
        new io.etcfs.spi.fs.InodeFence("elsewhere", 1, 1, false).value())));
  }

  @Override
  public void close() throws Exception {
    device.close();
    store.close();
  }
}
