package io.etcfs.lock.etcd.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.lock.LockMode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.support.shell.Table;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongFunction;
import org.junit.jupiter.api.Test;

class LockRowsTest {
  private static final String PREFIX = "/etcfs/fs1/locks/";
  private static final String LONG_PATH = "/projects/experiment-42/results/run-0001/output.dat";
  private static final Map<Long, String> KNOWN = Map.of(42L, "/dir/file", 43L, LONG_PATH);
  private static final LongFunction<Optional<String>> PATHS =
      ino -> Optional.ofNullable(KNOWN.get(ino));

  @Test
  void localRowsHaveADecimalInodeRecallsAndThePathWhereKnown() {
    Table t = LockRows.local(List.of(
        new LockRows.Local(42, LockMode.EXCLUSIVE, "held", 7, 1_500_000_000L, 0, 3),
        new LockRows.Local(255, LockMode.SHARED, "waiting", 9, 0, null, 0)), PATHS);
    String[] lines = t.render().split("\n");
    assertEquals("INODE  MODE  STATE    TOKEN  FOR_S  WAITERS  RECALLS  PATH", lines[0]);
    assertEquals("   42  X     held         7    1.5        0        3  /dir/file", lines[1]);
    assertEquals("  255  S     waiting      9    0.0        -        0  -", lines[2]);
    assertEquals("[\n  {\"inode\": 42, \"mode\": \"X\", \"state\": \"held\", \"token\": 7, "
        + "\"for_s\": 1.5, \"waiters\": 0, \"recalls\": 3, \"path\": \"/dir/file\"},\n"
        + "  {\"inode\": 255, \"mode\": \"S\", \"state\": \"waiting\", \"token\": 9, "
        + "\"for_s\": 0.0, \"waiters\": null, \"recalls\": 0, \"path\": null}\n]", t.json());
  }

  @Test
  void aLongPathShrinksFirstSoEveryLineFits80Columns() {
    Table t = LockRows.local(List.of(new LockRows.Local(43, LockMode.SHARED, "recalling",
        123_456_789, 3_600_000_000_000L, 12, 1_000)), PATHS);
    String[] lines = t.render().split("\n");
    assertEquals(2, lines.length);
    for (String line : lines) {
      assertTrue(line.length() <= Table.WIDTH, line.length() + ": " + line);
    }
    assertTrue(lines[1].matches("   43  S     recalling  123456789  3600.0  +12  +1000  /projects/"
        + "\\S+\\.\\.\\."), lines[1]);
    assertEquals(Table.WIDTH, lines[1].length(), "the path takes what is left, no more");
    assertTrue(t.json().contains("\"path\": \"" + LONG_PATH + "\""), "JSON is never cut");
  }

  @Test
  void everyKeyShowsItsInodeInDecimalThoughEtcdKeepsHex() {
    List<KeyValue> kvs = List.of(
        kv("000000000000002a/00000000000000a1", "X node1", 10, 0xa1),
        kv("000000000000002a/00000000000000b2", "S node2", 11, 0xb2),
        kv("ffffffffffffffff/00000000000000a1", "S node1", 12, 0xa1),
        kv("not-an-inode/00", "X node1", 13, 0));
    String[] lines = LockRows.all(PREFIX, kvs, PATHS).render().split("\n");
    assertEquals("               INODE  MODE  STATE   NODE   TOKEN  SESSION  PATH", lines[0]);
    assertEquals("                  42  X     held    node1     10  a1       /dir/file", lines[1]);
    assertEquals("                  42  S     queued  node2     11  b2       /dir/file", lines[2]);
    assertEquals("18446744073709551615  S     held    node1     12  a1       -", lines[3]);
    assertEquals(4, lines.length, "a key that names no inode is no row");
    String json = LockRows.all(PREFIX, kvs, PATHS).json();
    assertTrue(json.contains("{\"inode\": 42, \"mode\": \"X\", \"state\": \"held\", "
        + "\"node\": \"node1\", \"token\": 10, \"session\": \"a1\", \"path\": \"/dir/file\"}"),
        json);
    assertTrue(json.contains("{\"inode\": \"18446744073709551615\","), json);
  }

  @Test
  void aCleanHolderShowsAsCleanWithItsNodeName() {
    List<KeyValue> kvs = List.of(kv("000000000000002a/00000000000000a1", "X node1 clean", 10,
        0xa1));
    String[] lines = LockRows.all(PREFIX, kvs, PATHS).render().split("\n");
    assertEquals("INODE  MODE  STATE  NODE   TOKEN  SESSION  PATH", lines[0]);
    assertEquals("   42  X     clean  node1     10  a1       /dir/file", lines[1]);
  }

  @Test
  void recallCountsKeepTheMostRecentlyRecalledInodes() {
    RecallCounts counts = new RecallCounts(2);
    counts.served(1);
    counts.served(2);
    counts.served(1);
    counts.served(3); // 2 is the least recently recalled: it goes
    assertEquals(2, counts.of(1));
    assertEquals(0, counts.of(2));
    assertEquals(1, counts.of(3));
    counts.of(1); // a look is no recall: 1 stays the eldest
    counts.served(4);
    assertEquals(0, counts.of(1));
    assertEquals(1, counts.of(3));
  }

  private static KeyValue kv(String key, String value, long createRevision, long lease) {
    return new KeyValue(Keys.of(PREFIX + key), Keys.of(value), createRevision, createRevision, 1,
        lease);
  }
}
