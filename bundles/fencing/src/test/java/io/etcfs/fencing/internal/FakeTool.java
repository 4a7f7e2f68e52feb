package io.etcfs.fencing.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;

/**
 * A recorded command interface: a shell script standing in for {@code sg_persist} or
 * {@code nvme}. Each call appends its arguments to a log and answers with what the test queued
 * for that call's number (standard output, standard error, exit status, or a hang); a call with
 * nothing queued prints nothing and exits 0.
 */
final class FakeTool {
  private static final String SCRIPT = """
      #!/bin/sh
      d='%s'
      n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 ))
      echo "$n" > "$d/count"
      printf '%%s\\n' "$*" >> "$d/argv.log"
      if [ -f "$d/$n.hang" ]; then
        sleep 60 &
        echo $! > "$d/child.pid"
        wait
      fi
      [ -f "$d/$n.out" ] && cat "$d/$n.out"
      [ -f "$d/$n.err" ] && cat "$d/$n.err" >&2
      exit $(cat "$d/$n.exit" 2>/dev/null || echo 0)
      """;

  private final Path dir;
  private final Path script;

  FakeTool(Path tmp, String name) throws IOException {
    dir = Files.createDirectories(tmp.resolve("fake-" + name));
    script = tmp.resolve(name);
    Files.writeString(script, SCRIPT.formatted(dir));
    Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
  }

  String path() {
    return script.toString();
  }

  FakeTool reply(int call, String stdout) throws IOException {
    Files.writeString(dir.resolve(call + ".out"), stdout);
    return this;
  }

  FakeTool fail(int call, int exit, String stderr) throws IOException {
    Files.writeString(dir.resolve(call + ".err"), stderr);
    Files.writeString(dir.resolve(call + ".exit"), Integer.toString(exit));
    return this;
  }

  FakeTool hang(int call) throws IOException {
    Files.writeString(dir.resolve(call + ".hang"), "");
    return this;
  }

  /** The pid of the child a hanging call started, to check it was killed with its parent. */
  long childPid() throws IOException {
    return Long.parseLong(Files.readString(dir.resolve("child.pid")).strip());
  }

  /** The arguments of every call so far, one string per call. */
  List<String> calls() throws IOException {
    Path log = dir.resolve("argv.log");
    return Files.exists(log) ? Files.readAllLines(log) : List.of();
  }
}
