package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Handles;
import io.etcfs.fuse.common.DirHandle;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.vfs.Caller;
import io.etcfs.spi.vfs.FsException;
import io.etcfs.spi.vfs.Vfs;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import jnr.ffi.Pointer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import ru.serce.jnrfuse.FuseFillDir;

/** readdir's offsets, with a filler that takes a fixed number of entries per call. */
@Timeout(30)
class DirectoriesTest {

  /** Plays the kernel: calls readdir with the offset of the last entry it took. */
  private static final class Kernel implements FuseFillDir {
    final List<String> names = new ArrayList<>();
    final int perCall;
    int taken;
    long lastOffset;

    Kernel(int perCall) {
      this.perCall = perCall;
    }

    @Override
    public int apply(Pointer buf, ByteBuffer name, Pointer stbuf, long off) {
      if (taken == perCall) {
        return 1;
      }
      byte[] bytes = new byte[name.remaining() - 1];
      name.get(bytes);
      assertEquals(0, name.get(), "NUL-terminated");
      names.add(new String(bytes, StandardCharsets.UTF_8));
      assertTrue(off > 0, "offset mode: every entry has an offset");
      lastOffset = off;
      taken++;
      return 0;
    }

    List<String> listAll(Directories dirs, long fh) throws FsException {
      long offset = 0;
      for (int calls = 0; calls < 100_000; calls++) {
        taken = 0;
        dirs.read(fh, null, this, offset);
        if (taken == 0) {
          return names;
        }
        offset = lastOffset;
      }
      throw new AssertionError("readdir never ended");
    }
  }

  private static Directories dirsWith(MemoryVfs vfs, Handles handles) {
    return new Directories(vfs, handles);
  }

  @ParameterizedTest
  @CsvSource({"1, 1", "1, 7", "1, 100", "3, 1", "3, 2", "3, 5", "4, 600"})
  void listsEveryEntryOnceWhateverTheBufferAndGroups(int group, int perCall) throws Exception {
    MemoryVfs vfs = new MemoryVfs();
    vfs.cookieGroup = group;
    long dir = vfs.mkdir(Vfs.ROOT, "d", 0755, Caller.ROOT).ino();
    Set<String> made = new LinkedHashSet<>();
    for (int i = 0; i < 1500; i++) {
      vfs.mknod(dir, "n" + i, 0100644, 0, Caller.ROOT);
      made.add("n" + i);
    }
    Handles handles = new Handles();
    Directories dirs = dirsWith(vfs, handles);
    long fh = dirs.open(vfs.getattr(dir), Vfs.ROOT);
    List<String> listed = new Kernel(perCall).listAll(dirs, fh);
    assertEquals(".", listed.get(0));
    assertEquals("..", listed.get(1));
    Set<String> unique = new LinkedHashSet<>(listed.subList(2, listed.size()));
    if (perCall > group) {
      assertEquals(made, unique, "nothing skipped");
    } else {
      assertTrue(made.containsAll(unique), "terminates, and lists only real entries");
    }
    if (group == 1) {
      // a group is listed again only when the kernel's buffer ends inside it
      assertEquals(made.size(), listed.size() - 2, "nothing repeated");
    }
  }

  @Test
  void keptPageServesFollowingCalls() throws Exception {
    MemoryVfs vfs = new MemoryVfs();
    long dir = vfs.mkdir(Vfs.ROOT, "d", 0755, Caller.ROOT).ino();
    for (int i = 0; i < 2 * DirHandle.PAGE; i++) {
      vfs.mknod(dir, "n" + i, 0100644, 0, Caller.ROOT);
    }
    Handles handles = new Handles();
    Directories dirs = dirsWith(vfs, handles);
    long fh = dirs.open(vfs.getattr(dir), Vfs.ROOT);
    int before = vfs.count("readdir");
    assertEquals(2 * DirHandle.PAGE + 2, new Kernel(50).listAll(dirs, fh).size());
    assertEquals(2, vfs.count("readdir") - before, "each Vfs page asked once");
  }
}
