package io.etcfs.core.fs;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Inode numbers, reserved from {@code ino/next} in batches with a compare-and-set, so that a
 * create costs no extra round trip and nodes creating at once conflict only once per batch.
 * Numbers of a batch a node never uses are lost, which 64 bits can afford.
 */
final class InodeNumbers {
  static final long BATCH = 1024;

  private final Ctx ctx;
  private long next;
  private long end;

  InodeNumbers(Ctx ctx) {
    this.ctx = ctx;
  }

  synchronized long next() throws FsException {
    if (next >= end) {
      long start = reserve();
      next = start;
      end = start + BATCH;
    }
    return next++;
  }

  private long reserve() throws FsException {
    return ctx.tx.run("reserve inode numbers", tx -> {
      Optional<KeyValue> kv = tx.get(ctx.keys.inoNext());
      long start = kv.isEmpty() ? -1 : parse(kv.get());
      if (start < 2) {
        throw new FsException(Errno.EIO, "bad inode counter at " + new String(ctx.keys.inoNext(),
            StandardCharsets.UTF_8) + " (filesystem not formatted by this version?)");
      }
      tx.put(ctx.keys.inoNext(), Long.toString(start + BATCH).getBytes(StandardCharsets.UTF_8));
      return start;
    });
  }

  private static long parse(KeyValue kv) throws FsException {
    return Records.decode(kv, v -> {
      try {
        return Long.parseLong(new String(v, StandardCharsets.UTF_8).trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("not a number", e);
      }
    });
  }
}
