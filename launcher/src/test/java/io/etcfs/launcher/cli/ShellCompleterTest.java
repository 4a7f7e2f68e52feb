package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jline.reader.Candidate;
import org.jline.reader.impl.DefaultParser;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShellCompleterTest {
  @TempDir Path tmp;
  private Path mnt;
  private ShellCompleter completer;

  @BeforeEach
  void setUp() throws Exception {
    mnt = Files.createDirectories(tmp.resolve("mnt"));
    Files.createDirectories(mnt.resolve("docs/old"));
    Files.writeString(mnt.resolve("docs/a.txt"), "a");
    Files.writeString(mnt.resolve("data.bin"), "b");
    completer = new ShellCompleter(
        () -> List.of("etcfs:members", "etcfs:fence", "etcfs:inode", "felix:lb", "gogo:grep",
            "gogo:__files", "gogo:less"),
        () -> List.of("node1", "node2"), mnt);
  }

  private List<String> complete(String line) {
    List<Candidate> out = new ArrayList<>();
    completer.complete(null, new DefaultParser().parse(line, line.length()), out);
    return out.stream().map(Candidate::value).sorted().toList();
  }

  @Test
  void commandNamesWithAndWithoutScope() {
    assertEquals(List.of("etcfs:fence", "etcfs:inode", "etcfs:members", "exit", "felix:lb",
        "fence", "gogo:grep", "grep", "inode", "lb", "members"), complete(""));
    assertEquals(complete(""), complete("lb | "));
  }

  @Test
  void memberNamesAfterFenceAndMembers() {
    assertEquals(List.of("node1", "node2"), complete("fence "));
    assertEquals(List.of("node1", "node2"), complete("etcfs:members n"));
    assertEquals(List.of(), complete("lb "));
    assertEquals(List.of(), complete("fence --"));
  }

  @Test
  void pathsBelowTheMountpointOnly() {
    assertEquals(List.of(mnt + "/"), complete("inode "));
    assertEquals(List.of(mnt + "/data.bin", mnt + "/docs/"), complete("inode " + mnt + "/d"));
    assertEquals(List.of(mnt + "/docs/a.txt", mnt + "/docs/old/"),
        complete("extents " + mnt + "/docs/"));
    assertEquals(List.of(), complete("inode " + mnt + "/docs/../../"));
    assertEquals(List.of(), complete("inode /etc/"));
  }

  @Test
  void exitTakesAnOptionalStatus() {
    assertEquals(3, InteractiveShell.exitStatus("exit", 3));
    assertEquals(0, InteractiveShell.exitStatus("exit 0", 3));
    assertEquals(null, InteractiveShell.exitStatus("exitnow", 3));
    assertEquals(null, InteractiveShell.exitStatus("exit now", 3));
  }
}
