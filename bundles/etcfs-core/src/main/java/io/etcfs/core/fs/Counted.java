package io.etcfs.core.fs;

import io.etcfs.spi.blockdev.BlockDevice;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.spi.meta.Watch;
import io.etcfs.spi.meta.WatchListener;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;

/** The engine's store and device, counted into {@link Stats} on their way through. */
final class Counted {
  private Counted() {}

  static MetaStore store(MetaStore store, Stats stats) {
    return new MetaStore() {
      @Override
      public Optional<KeyValue> get(byte[] key) {
        stats.storeGets.increment();
        return store.get(key);
      }

      @Override
      public RangeResult range(byte[] from, byte[] to, int limit) {
        stats.storeRanges.increment();
        return store.range(from, to, limit);
      }

      @Override
      public TxnResult commit(Txn txn) {
        stats.storeCommits.increment();
        return store.commit(txn);
      }

      @Override
      public Watch watch(byte[] prefix, long fromRevision, WatchListener listener) {
        return store.watch(prefix, fromRevision, listener);
      }

      @Override
      public long grantLease(Duration ttl) {
        return store.grantLease(ttl);
      }

      @Override
      public long keepAliveOnce(long lease) {
        return store.keepAliveOnce(lease);
      }

      @Override
      public void revokeLease(long lease) {
        store.revokeLease(lease);
      }

      @Override
      public long leaseTimeToLive(long lease) {
        return store.leaseTimeToLive(lease);
      }

      @Override
      public String describe() {
        return store.describe();
      }
    };
  }

  static BlockDevice device(BlockDevice device, Stats stats) {
    return new BlockDevice() {
      @Override
      public long size() {
        return device.size();
      }

      @Override
      public int read(ByteBuffer dst, long offset) throws IOException {
        int n = device.read(dst, offset);
        stats.deviceReadBytes.add(n);
        return n;
      }

      @Override
      public void write(ByteBuffer src, long offset) throws IOException {
        int n = src.remaining();
        device.write(src, offset);
        stats.deviceWriteBytes.add(n);
      }

      @Override
      public void flush() throws IOException {
        device.flush();
      }

      @Override
      public void close() throws IOException {
        device.close();
      }
    };
  }
}
