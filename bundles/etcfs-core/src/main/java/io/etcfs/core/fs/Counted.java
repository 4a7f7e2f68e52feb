package io.etcfs.core.fs;

import io.etcfs.spi.blockdev.BlockDevice;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.NoWait;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import io.etcfs.support.meta.ForwardingMetaStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Optional;

/** The engine's store and device, counted into {@link Stats} on their way through. */
final class Counted {
  private Counted() {}

  static MetaStore store(MetaStore store, Stats stats) {
    return new ForwardingMetaStore(store) {
      @Override
      public Optional<KeyValue> get(byte[] key) {
        NoWait.check(); // for any store, not only etcd's (see NoWait)
        stats.storeGets.increment();
        return delegate.get(key);
      }

      @Override
      public RangeResult range(byte[] from, byte[] to, int limit) {
        NoWait.check();
        stats.storeRanges.increment();
        return delegate.range(from, to, limit);
      }

      @Override
      public TxnResult commit(Txn txn) {
        NoWait.check();
        boolean read = txn.compares().isEmpty()
            && txn.onSuccess().stream().allMatch(op -> op instanceof Op.Range);
        if (read) {
          stats.storeRanges.increment(); // reads at one revision: a read, not a commit
        } else {
          stats.storeCommits.increment();
        }
        long start = System.nanoTime();
        boolean failed = true;
        try {
          TxnResult r = delegate.commit(txn);
          failed = false;
          return r;
        } finally {
          if (!read) {
            stats.storeCommitTime.record(System.nanoTime() - start, failed);
          }
        }
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
