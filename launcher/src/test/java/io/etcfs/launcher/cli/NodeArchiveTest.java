package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The class-data-sharing archive's life: claimed, dumped by one node, promoted, used. */
class NodeArchiveTest {
  private static final List<String> OPTS = List.of("-XX:+UseSerialGC");
  @TempDir Path home;
  private String classPath;
  private String previousHome;

  @BeforeEach
  void fakeHome() throws Exception {
    Files.createDirectories(home.resolve("bundle"));
    Files.writeString(home.resolve("bundle/a.jar"), "bundle");
    Path lib = Files.createDirectories(home.resolve("lib"));
    Files.writeString(lib.resolve("launcher.jar"), "launcher");
    classPath = lib.resolve("launcher.jar").toString();
    previousHome = System.setProperty("etcfs.home", home.toString());
  }

  @AfterEach
  void restoreHome() {
    if (previousHome == null) {
      System.clearProperty("etcfs.home");
    } else {
      System.setProperty("etcfs.home", previousHome);
    }
  }

  @Test
  void aReadyNodesDumpIsPromotedAtTheNextStartAndUsedFromThen() throws Exception {
    NodeArchive.Plan first = NodeArchive.plan(classPath, OPTS);
    String dump = first.options().get(0);
    assertTrue(dump.startsWith("-XX:ArchiveClassesAtExit=" + home.resolve("cds")), dump);
    Path part = Path.of(dump.substring(dump.indexOf('=') + 1));
    // a stand-in for the node: a live process whose command line names the part file
    Process node = new ProcessBuilder("sh", "-c", "sleep 60", part.toString()).start();
    try {
      first.started(node.pid());
      first.ready();
      NodeArchive.Plan second = NodeArchive.plan(classPath, OPTS);
      assertTrue(second.options().get(0).startsWith("-XX:ArchiveClassesAtExit="), "own dump");
      second.abandoned();
      Files.write(part, header(4096));
    } finally {
      node.destroy();
      node.waitFor(10, TimeUnit.SECONDS);
    }
    NodeArchive.Plan next = NodeArchive.plan(classPath, OPTS);
    String partName = part.getFileName().toString(); // node-KEY.ID.jsa.part
    Path archive = home.resolve("cds").resolve(partName.substring(0, partName.indexOf('.')) + ".jsa");
    assertEquals(List.of("-XX:SharedArchiveFile=" + archive), next.options());
    assertNull(next.claim());
    assertFalse(Files.exists(part));
  }

  @Test
  void anIncompleteDumpIsDroppedAndClaimedAgain() throws Exception {
    NodeArchive.Plan first = NodeArchive.plan(classPath, OPTS);
    Path part = Path.of(first.options().get(0).split("=", 2)[1]);
    first.started(Long.MAX_VALUE); // no such process: the node is gone
    Files.write(part, new byte[8192]); // the header, written last, never came
    NodeArchive.Plan again = NodeArchive.plan(classPath, OPTS);
    assertTrue(again.options().get(0).startsWith("-XX:ArchiveClassesAtExit="), again.toString());
    assertFalse(Files.exists(part));
  }

  @Test
  void umountAndDownSettleWhatTheirNodesWroteAtExit() throws Exception {
    NodeArchive.Plan first = NodeArchive.plan(classPath, OPTS);
    Path part = Path.of(first.options().get(0).split("=", 2)[1]);
    first.started(Long.MAX_VALUE);
    first.ready();
    Files.write(part, header(4096));
    NodeArchive.settle();
    try (var s = Files.list(home.resolve("cds"))) {
      assertEquals(List.of(part.getFileName().toString().substring(0,
          part.getFileName().toString().indexOf('.')) + ".jsa"),
          s.map(p -> p.getFileName().toString()).toList());
    }
  }

  @Test
  void theDumpOfANodeThatNeverBecameReadyIsDropped() throws Exception {
    NodeArchive.Plan first = NodeArchive.plan(classPath, OPTS);
    Path part = Path.of(first.options().get(0).split("=", 2)[1]);
    first.started(Long.MAX_VALUE);
    Files.write(part, header(4096)); // complete, but of a start that failed half-way
    assertTrue(NodeArchive.plan(classPath, OPTS).options().get(0)
        .startsWith("-XX:ArchiveClassesAtExit="));
    assertFalse(Files.exists(part));
  }

  @Test
  void sharingOptionsOfTheUsersOwnTurnItOff() {
    assertEquals(NodeArchive.Plan.NONE,
        NodeArchive.plan(classPath, List.of("-XX:+UseSerialGC", "-Xshare:off")));
    assertFalse(Files.exists(home.resolve("cds")));
  }

  @Test
  void theKeyChangesWithTheBundlesAndTheOptions() throws Exception {
    String key = NodeArchive.key(classPath, OPTS);
    assertFalse(key.equals(NodeArchive.key(classPath, List.of("-XX:+UseG1GC"))));
    Files.writeString(home.resolve("bundle/a.jar"), "another bundle");
    assertFalse(key.equals(NodeArchive.key(classPath, OPTS)));
  }

  private static byte[] header(int size) {
    ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(0, 0xf00baba8);
    return b.array();
  }
}
