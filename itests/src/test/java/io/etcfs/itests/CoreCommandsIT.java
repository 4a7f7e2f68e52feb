package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The core's shell commands on a running node (issue #6): {@code inode}, {@code extents},
 * {@code stats}, {@code lock switch}'s refusals, through {@code etcfs shell MOUNTPOINT -c}.
 */
@Timeout(180)
class CoreCommandsIT {
  @TempDir static Path tmp;
  static LocalCluster cluster;
  static Path mp;

  @BeforeAll
  static void up() throws Exception {
    // The node keeps the lock of the file it wrote for the completion test below: a closed
    // file's clean lock is made shared after a second unused by default, less than a few shell
    // commands take on a loaded machine. (This also shows ETCFS_NODE_CONFIG reaching a node.)
    cluster = LocalCluster.up(tmp.resolve("c"), 1, "1G",
        java.util.Map.of("ETCFS_NODE_CONFIG", "io.etcfs.lock.etcd.cleanReleaseMillis=600000"));
    mp = cluster.mount(1);
    Files.write(mp.resolve("f"), new byte[3 * 4096 + 100]);
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void inodeShowsTheAttributesByPathUnderTheMountOrFromTheRootOrByNumber() throws Exception {
    String out = ok("inode " + mp.resolve("f"));
    assertTrue(out.contains("type    regular file"), out);
    assertTrue(out.contains("size    12388"), out);
    String ino = field(out, "ino");
    assertEquals(out, ok("inode /f"));
    assertEquals(out, ok("inode " + ino));
    String json = ok("inode /f --json");
    assertTrue(json.startsWith("{\"ino\": " + ino + ", \"type\": \"regular file\""), json);
  }

  @Test
  void extentsListTheDeviceBlocksOfAFile() throws Exception {
    String out = ok("extents /f");
    List<String> lines = out.lines().toList();
    assertEquals("FILE_BLOCK  DEVICE_BLOCK  BLOCKS  DEVICE_OFFSET  BYTES", lines.get(0));
    assertTrue(out.contains("extent(s) of inode"), out);
    assertTrue(out.contains(" 4 blocks of 4096 bytes; size 12388"), out);
    for (String l : lines) {
      assertTrue(l.length() <= 80, l);
    }
    assertTrue(ok("extents /f --json").startsWith("[\n  {\"file_block\": 0, \"device_block\": "));
  }

  @Test
  void statsCountOperationsEtcdAndTheDevice() throws Exception {
    Files.readAllBytes(mp.resolve("f"));
    String out = ok("stats");
    assertTrue(out.lines().findFirst().orElse("").startsWith("OP"), out);
    assertTrue(Pattern.compile("(?m)^read\\s+[1-9]").matcher(out).find(), out);
    assertTrue(Pattern.compile("etcd round trips\\s+[\\d,]+ reads").matcher(out).find(), out);
    assertTrue(Pattern.compile("device\\s+[1-9][\\d,]* bytes read").matcher(out).find(), out);
    String json = ok("stats --json");
    assertTrue(json.startsWith("{\"ops\": [") && json.contains("\"etcd_commits\": "), json);
  }

  /**
   * What both shells offer on Tab, asked the way {@code etcfs shell} asks the node: paths below
   * the mount or from the root, and the inodes this node works on with their paths.
   */
  @Test
  void completionOffersPathsAndTheInodesThisNodeHoldsWithTheirPaths() throws Exception {
    Files.createDirectories(mp.resolve("dir"));
    assertEquals(List.of("c " + enc(mp + "/f") + " -", "p " + enc(mp + "/dir/") + " -"),
        candidates("inode", mp + "/").stream().sorted().toList());
    assertEquals(List.of("c " + enc("/f") + " -"), candidates("extents", "/f"));
    String ino = field(ok("inode /f"), "ino");
    // The node wrote f, so it holds f's inode lock (kept until another node asks for it).
    assertTrue(candidates("inode", "").contains("c " + ino + " " + enc("/f")),
        candidates("inode", "").toString());
    assertEquals(List.of("--json", "-h"), candidates("stats", "").stream()
        .map(l -> l.split(" ")[1]).toList());
    assertEquals(List.of("c backend -"), candidates("lock", "b"));
  }

  /** {@code etcfs:_candidates} for the last of {@code words}, as the CLI encodes them. */
  private static List<String> candidates(String... words) throws Exception {
    StringBuilder line = new StringBuilder("etcfs:_candidates " + (words.length - 1));
    for (String w : words) {
      line.append(' ').append(io.etcfs.spi.shell.Completion.encodeWord(w));
    }
    String out = ok(line.toString());
    return out.isEmpty() ? List.of() : out.lines().toList();
  }

  private static String enc(String s) {
    return java.net.URLEncoder.encode(s, java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void badInputGetsOneLineAndAStatus() throws Exception {
    assertBad("inode", "etcfs: inode: expected 1 operand, got 0 (usage: inode PATH|INO [--json])");
    assertBad("inode /nosuch", "etcfs: '/nosuch': no such file in this filesystem (a path "
        + "outside " + mp + " is read from the filesystem's root)");
    assertBad("inode " + mp + "/nosuch", "etcfs: '" + mp + "/nosuch': no such file in this "
        + "filesystem");
    assertBad("inode 99999999", "etcfs: no inode 99999999");
    assertBad("inode relative/path", "etcfs: 'relative/path' is neither an inode number nor a");
    assertBad("stats --yaml", "etcfs: stats: unknown option --yaml (usage: stats [--json])");
    assertBad("lock", "etcfs: lock: expected 1 to 2 operands, got 0 (usage: lock backend | lock");
    assertBad("alloc backends", "etcfs: alloc: unknown action 'backends' (usage: alloc backend"
        + " | alloc switch NAME)");
    assertBad("etcfs:_candidates 3 wZmVuY2U", "etcfs: _candidates: word index 3 outside the 1");
    assertBad("lock switch nosuch", "etcfs: no lock backend 'nosuch' here (installed: etcd,"
        + " hazelcast)");
    assertBad("alloc switch nosuch", "etcfs: no allocator 'nosuch' here (installed: arena,"
        + " shared)");
  }

  private static String ok(String command) throws Exception {
    Distribution.Result r = cluster.etcfs("shell", mp.toString(), "-c", command);
    assertEquals(0, r.exit(), command + ": " + r);
    return r.out().strip();
  }

  private static void assertBad(String command, String start) throws Exception {
    Distribution.Result r = cluster.etcfs("shell", mp.toString(), "-c", command);
    assertTrue(r.exit() != 0, command + " succeeded: " + r);
    String all = (r.out() + r.err()).strip();
    assertEquals(1, all.lines().count(), command + ": " + all);
    assertTrue(all.startsWith(start), command + ": " + all);
  }

  private static String field(String out, String name) {
    Matcher m = Pattern.compile("(?m)^" + name + "\\s+(\\S+)").matcher(out);
    assertTrue(m.find(), out);
    return m.group(1);
  }
}
