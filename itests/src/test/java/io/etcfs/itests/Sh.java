package io.etcfs.itests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the ordinary tools a user would run on a mount, as root or as another user. */
final class Sh {
  static final int NOBODY = 65534;

  private Sh() {}

  /**
   * A finished command.
   *
   * @param exit its status
   * @param out its standard output
   * @param err its standard error
   */
  record Out(int exit, String out, String err) {
    Out ok() {
      if (exit != 0) {
        throw new AssertionError("command failed: " + this);
      }
      return this;
    }

    /** Asserts the command failed with the strerror text of the expected errno. */
    Out fails(String strerror) {
      if (exit == 0 || !err.contains(strerror)) {
        throw new AssertionError("expected failure '" + strerror + "', got " + this);
      }
      return this;
    }
  }

  static Out run(String... cmd) throws IOException, InterruptedException {
    return exec(List.of(cmd));
  }

  /** Runs {@code cmd} as {@code uid}:{@code gid} with no supplementary groups. */
  static Out as(int uid, int gid, String... cmd) throws IOException, InterruptedException {
    List<String> full = new ArrayList<>(List.of("setpriv", "--reuid=" + uid, "--regid=" + gid,
        "--clear-groups", "--"));
    full.addAll(List.of(cmd));
    return exec(full);
  }

  /** Runs {@code cmd} as {@code uid}:{@code gid} with the supplementary groups {@code groups}. */
  static Out asWithGroups(int uid, int gid, String groups, String... cmd)
      throws IOException, InterruptedException {
    List<String> full = new ArrayList<>(List.of("setpriv", "--reuid=" + uid, "--regid=" + gid,
        "--groups=" + groups, "--"));
    full.addAll(List.of(cmd));
    return exec(full);
  }

  private static Out exec(List<String> cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).start();
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("timed out: " + cmd);
    }
    return new Out(p.exitValue(), new String(out, StandardCharsets.UTF_8),
        new String(err, StandardCharsets.UTF_8));
  }
}
