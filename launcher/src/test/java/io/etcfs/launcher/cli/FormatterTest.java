package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.core.format.FilesystemCheck;
import io.etcfs.core.format.FormatException;
import io.etcfs.core.format.Formatter;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.testing.MemoryMetaStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Format and the pre-mount check against the in-memory metadata engine and an image file. */
@Timeout(30)
class FormatterTest {
  @TempDir Path tmp;
  private final MemoryMetaStore store = new MemoryMetaStore();
  private final List<String> progress = new ArrayList<>();
  private final Formatter formatter = new Formatter(store, progress::add);

  private FsRecord format(Path dev, long size, String name, boolean force) throws Exception {
    return formatter.format(new Formatter.Options(dev, size, name, force, 64L << 20));
  }

  @Test
  void createsASparseImageAndARecordThatVerify() throws Exception {
    Path dev = tmp.resolve("a.img");
    FsRecord r = format(dev, 1L << 30, "a", false);
    assertEquals(1L << 30, Files.size(dev));
    assertEquals(15, r.arenas());
    assertEquals(r, FilesystemCheck.verify(store, "a", dev));
    assertTrue(progress.get(progress.size() - 1).startsWith("formatted " + dev));
  }

  @Test
  void refusesAnExistingFilesystemUnlessForced() throws Exception {
    Path dev = tmp.resolve("a.img");
    FsRecord first = format(dev, 1L << 30, "a", false);
    FormatException e = assertThrows(FormatException.class, () -> format(dev, 0, "b", false));
    assertEquals("device " + dev + " already holds an etcfs filesystem (use --force to overwrite"
        + " it)", e.getMessage());
    FsRecord second = format(dev, 0, "a", true);
    assertTrue(!second.uuid().equals(first.uuid()));
    assertEquals(second, FilesystemCheck.verify(store, "a", dev));
  }

  @Test
  void refusesANameAlreadyInEtcd() throws Exception {
    format(tmp.resolve("a.img"), 1L << 30, "a", false);
    FormatException e = assertThrows(FormatException.class,
        () -> format(tmp.resolve("b.img"), 1L << 30, "a", false));
    assertTrue(e.getMessage().startsWith("filesystem 'a' already exists in etcd"), e.getMessage());
  }

  @Test
  void refusesToReplaceAFilesystemWithLiveMembersEvenWhenForced() throws Exception {
    Path dev = tmp.resolve("a.img");
    format(dev, 1L << 30, "a", false);
    store.commit(new Txn().then(
        Op.put(Keyspace.of("a").bytes(Keyspace.MEMBERS + "n1"), Keys.of("host=x"))));
    FormatException e = assertThrows(FormatException.class, () -> format(dev, 0, "a", true));
    assertEquals("filesystem 'a' has live members (n1): unmount them first", e.getMessage());
  }

  @Test
  void refusesTooSmallAndMissingDevices() throws Exception {
    FormatException small = assertThrows(FormatException.class,
        () -> format(tmp.resolve("s.img"), 2L << 20, "s", false));
    assertTrue(small.getMessage().contains("is too small"), small.getMessage());
    FormatException missing = assertThrows(FormatException.class,
        () -> format(tmp.resolve("m.img"), 0, "m", false));
    assertEquals("device " + tmp.resolve("m.img") + " does not exist (give --size to create an"
        + " image file)", missing.getMessage());
  }

  @Test
  void verifyRefusesTheDeviceOfAnotherFilesystem() throws Exception {
    format(tmp.resolve("a.img"), 1L << 30, "a", false);
    format(tmp.resolve("b.img"), 1L << 30, "b", false);
    FormatException e = assertThrows(FormatException.class,
        () -> FilesystemCheck.verify(store, "a", tmp.resolve("b.img")));
    assertTrue(e.getMessage().endsWith("in etcd: refusing to mount"), e.getMessage());
    FormatException none = assertThrows(FormatException.class,
        () -> FilesystemCheck.verify(store, "zz", tmp.resolve("b.img")));
    assertTrue(none.getMessage().startsWith("no filesystem 'zz' in etcd"), none.getMessage());
  }
}
