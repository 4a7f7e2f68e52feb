package io.etcfs.shell.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(5)
class MemberTableTest {
  private static final String PREFIX = "/etcfs/fs1/members/";

  @Test
  void alignsTheColumns() {
    String table = MemberTable.format(MemberTable.rows(PREFIX, List.of(
        member("n1", 12, "host-a", 4711, "/mnt/etcfs", 0x694d7e1b2c3aL),
        member("node-22", 1005, "b", 99, "/m", 0x1fL))));
    assertEquals(
        String.join("\n",
            "NAME      GEN  HOST     PID  MOUNTPOINT  LEASE",
            "n1         12  host-a  4711  /mnt/etcfs  694d7e1b2c3a",
            "node-22  1005  b         99  /m          1f"),
        table);
  }

  @Test
  void narrowsFreeTextColumnsToFitEightyCharactersAndKeepsIdsWhole() {
    String longName = "a-node-name-that-goes-on-and-on-and-on";
    String longMount = "/srv/cluster/volumes/shared/with/a/very/deep/mountpoint/path";
    String table = MemberTable.format(MemberTable.rows(PREFIX, List.of(
        member(longName, 1234567890L, "host.example.internal.long.domain", 4194304,
            longMount, Long.MAX_VALUE))));
    String[] lines = table.split("\n");
    for (String line : lines) {
      assertTrue(line.length() <= MemberTable.WIDTH, line.length() + ": " + line);
    }
    assertTrue(lines[1].contains("1234567890"), lines[1]);
    assertTrue(lines[1].contains("4194304"), lines[1]);
    assertTrue(lines[1].endsWith(Long.toHexString(Long.MAX_VALUE)), lines[1]);
    assertTrue(lines[1].startsWith("a-node-na... "), lines[1]);
  }

  @Test
  void showsADamagedRecordAsQuestionMarks() {
    KeyValue kv = new KeyValue(Keys.of(PREFIX + "n3"), bytes("\\uZZZZ"), 7, 7, 1, 0);
    String[] row = MemberTable.rows(PREFIX, List.of(kv)).get(0);
    assertEquals(List.of("n3", "7", "?", "?", "?", "-"), List.of(row));
  }

  @Test
  void theCommandListsTheMembersOfItsFilesystem() {
    RangeResult two = new RangeResult(List.of(
        member("n1", 12, "host-a", 4711, "/mnt/etcfs", 0xabL),
        member("n2", 15, "host-b", 4712, "/mnt/etcfs", 0xacL)), 20, false);
    String table = new MembersCommand(store(two), config("fs1")).members();
    assertEquals(3, table.split("\n").length);
    assertTrue(table.contains("n2"), table);
  }

  @Test
  void theCommandSaysWhenThereAreNoMembers() {
    RangeResult none = new RangeResult(List.of(), 31, false);
    assertEquals("no members of fs1 (revision 31)",
        new MembersCommand(store(none), config("fs1")).members());
  }

  private static KeyValue member(
      String name, long generation, String host, long pid, String mountpoint, long lease) {
    String record = "host=" + host + "\npid=" + pid + "\nmountpoint=" + mountpoint
        + "\njoined=2026-01-01T00\\:00\\:00Z\nleaseTtl=10\n";
    return new KeyValue(Keys.of(PREFIX + name), bytes(record), generation, generation, 1, lease);
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static MetaStore store(RangeResult members) {
    return (MetaStore) Proxy.newProxyInstance(
        MetaStore.class.getClassLoader(),
        new Class<?>[] {MetaStore.class},
        (proxy, method, args) -> {
          if (method.getName().equals("prefix")
              && new String((byte[]) args[0], StandardCharsets.UTF_8).equals(PREFIX)) {
            return members;
          }
          throw new AssertionError("unexpected store call: " + method);
        });
  }

  @SuppressWarnings("all")
  private static MembersCommand.Config config(String fs) {
    return new MembersCommand.Config() {
      @Override
      public Class<? extends Annotation> annotationType() {
        return MembersCommand.Config.class;
      }

      @Override
      public String fsName() {
        return fs;
      }
    };
  }
}
