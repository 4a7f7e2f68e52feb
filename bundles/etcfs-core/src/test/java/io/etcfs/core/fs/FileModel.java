package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.SetAttr;
import java.util.Arrays;
import java.util.Random;

/**
 * A random run of writes, truncates, punched holes, fsyncs and reads of one file, each read
 * checked against a byte model of what the file must hold.
 */
final class FileModel {
  final byte[] bytes = new byte[1 << 20];
  int size;

  /**
   * {@code steps} steps drawn from {@code kinds} kinds: 0 truncates, 1 punches, the next
   * {@code fsyncs} fsync, the one after reads, the rest write — one write in {@code longOneIn}
   * 100–200 KB long (past a small buffer), the others up to 8,000 bytes.
   */
  void run(EtcFs fs, OpenFile f, Random rnd, int steps, int kinds, int fsyncs, int longOneIn)
      throws Exception {
    for (int i = 0; i < steps; i++) {
      int op = rnd.nextInt(kinds);
      if (op == 0) {
        int cut = rnd.nextInt(size + 1);
        fs.setattr(f.ino(), SetAttr.size(cut), Caller.ROOT);
        Arrays.fill(bytes, cut, bytes.length, (byte) 0);
        size = cut;
      } else if (op == 1 && size > 0) {
        int off = rnd.nextInt(size);
        int len = 1 + rnd.nextInt(64 * 1024);
        f.fallocate(OpenFile.PUNCH_HOLE | OpenFile.KEEP_SIZE, off, len);
        Arrays.fill(bytes, off, Math.min(size, off + len), (byte) 0);
      } else if (op >= 2 && op < 2 + fsyncs) {
        f.fsync(false);
      } else if (op == 2 + fsyncs && size > 0) {
        int off = rnd.nextInt(size);
        int len = rnd.nextInt(100_000);
        assertArrayEquals(Arrays.copyOfRange(bytes, off, Math.min(size, off + len)),
            DataPathTest.read(f, off, len), "read at " + off + " step " + i);
      } else if (op > 2 + fsyncs) {
        int off = rnd.nextInt(bytes.length - 200_000);
        byte[] d = DataPathTest.bytes(rnd.nextInt(longOneIn) > 0 ? 1 + rnd.nextInt(8000)
            : 100_000 + rnd.nextInt(100_000), i);
        WriteAheadTest.write(f, off, d);
        System.arraycopy(d, 0, bytes, off, d.length);
        size = Math.max(size, off + d.length);
      }
    }
  }

  /**
   * The file holds the model through {@code f}, through a descriptor opened after {@code f}'s
   * release, and as committed ({@code committedSize}).
   */
  void check(EtcFs fs, OpenFile f, java.util.function.LongUnaryOperator committedSize)
      throws Exception {
    assertEquals(size, fs.getattr(f.ino()).size());
    assertArrayEquals(Arrays.copyOf(bytes, size), DataPathTest.read(f, 0, bytes.length));
    f.release();
    assertEquals(size, committedSize.applyAsLong(f.ino()));
    OpenFile r = fs.open(f.ino(), 0, Caller.ROOT);
    assertArrayEquals(Arrays.copyOf(bytes, size), DataPathTest.read(r, 0, bytes.length));
    r.release();
  }
}
