package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.ProcGroups;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(10)
class ProcGroupsTest {
  @TempDir Path dir;

  @Test
  void readsTheGroupsLine() throws Exception {
    Path status = Files.writeString(dir.resolve("status"),
        "Name:\tsh\nUid:\t65534\t65534\t65534\t65534\nGroups:\t65533 65532 4294967294 \nNgid:\t0\n");
    assertEquals(List.of(65533, 65532, (int) 4294967294L), ProcGroups.of(status));
  }

  @Test
  void noGroupsAndGoneProcessesGiveNone() throws Exception {
    assertEquals(List.of(), ProcGroups.of(Files.writeString(dir.resolve("s"), "Groups:\t\n")));
    assertEquals(List.of(), ProcGroups.of(dir.resolve("gone")));
    assertEquals(List.of(), ProcGroups.of(Integer.MAX_VALUE));
  }

  @Test
  void readsALiveThread() {
    int pid = (int) ProcessHandle.current().pid();
    List<Integer> groups = ProcGroups.of(pid);
    assertFalse(groups.contains(null));
    assertTrue(groups.size() < 65536);
  }

  @Test
  void hiddenNamesAreLibfusesOnly() {
    assertTrue(HiddenNames.isHidden(".fuse_hidden000000020000000a"));
    assertFalse(HiddenNames.isHidden(".fuse_hidden"));
    assertFalse(HiddenNames.isHidden(".fuse_hidden00000002000000zz"));
    assertFalse(HiddenNames.isHidden("x.fuse_hidden000000020000000a"));
  }
}
