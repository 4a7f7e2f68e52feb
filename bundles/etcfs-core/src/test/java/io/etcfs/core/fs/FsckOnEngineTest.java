package io.etcfs.core.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.check.CheckReport;
import io.etcfs.core.check.FsChecker;
import io.etcfs.core.check.FsSnapshot;
import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.OpenFile;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check agrees with what the engine writes: a tree made through the core (directories,
 * files with data, hard links, renames, unlinks, an unlinked file still open) checks clean, so
 * every rule of the checker is the core's own (link counts, ownership records, orphans).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FsckOnEngineTest {
  static final Caller ROOT = Caller.ROOT;

  @TempDir Path dir;

  @Test
  void aTreeTheEngineWroteChecksClean() throws Exception {
    try (FsFixture fx = new FsFixture(dir, 0)) {
      EtcFs fs = fx.node("n1").fs;
      long a = fs.mkdir(Vfs.ROOT, "a", 0755, ROOT).ino();
      long b = fs.mkdir(a, "b", 0755, ROOT).ino();
      fs.mkdir(a, "c", 0755, ROOT);
      OpenFile f = fs.create(b, "f", 0644, 2, ROOT);
      f.write(ByteBuffer.wrap(new byte[100_000]), 0);
      f.write(ByteBuffer.wrap(new byte[5_000]), 4_000);
      f.fsync(false);
      f.release();
      fs.link(f.ino(), a, "hard", ROOT);
      fs.rename(a, "c", Vfs.ROOT, "c2", ROOT);
      OpenFile g = fs.create(Vfs.ROOT, "open-unlinked", 0644, 2, ROOT);
      g.write(ByteBuffer.wrap(new byte[10_000]), 0);
      g.fsync(false);
      fs.unlink(Vfs.ROOT, "open-unlinked", ROOT);
      OpenFile h = fs.create(Vfs.ROOT, "gone", 0644, 2, ROOT);
      h.write(ByteBuffer.wrap(new byte[9_000]), 0);
      h.release();
      fs.unlink(Vfs.ROOT, "gone", ROOT);

      CheckReport r = FsChecker.check(FsSnapshot.read(fx.store, FsFixture.FS), null, s -> { })
          .report();
      assertTrue(r.clean(), () -> String.join("\n", r.findings().stream().map(x -> x.line())
          .toList()));
      assertEquals(6L, r.stats().get("inodes"), r.stats().toString());
      assertTrue(r.stats().get("referencedBlocks") >= 25 + 3, r.stats().toString());
      g.release();
      fs.close();
    }
  }
}
