package io.etcfs.fuse.common;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs fusermount (which also works for a node that is not root) under a time limit. */
public final class Fusermount {
  private static final Logger LOG = System.getLogger(Fusermount.class.getName());
  public static final Path CONNECTIONS = Path.of("/sys/fs/fuse/connections");

  private Fusermount() {}

  /** Runs {@code fusermount args}; true if it exited 0 in time. */
  public static boolean run(long timeoutMillis, String... args) {
    List<String> command = new ArrayList<>(List.of("fusermount"));
    command.addAll(List.of(args));
    try {
      Process process = new ProcessBuilder(command)
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .start();
      if (!process.waitFor(Math.max(timeoutMillis, 1), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        LOG.log(Level.WARNING, "{0} did not finish in {1} ms", command, timeoutMillis);
        return false;
      }
      return process.exitValue() == 0;
    } catch (IOException e) {
      LOG.log(Level.WARNING, "cannot run {0}: {1}", command, e.toString());
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Aborts the FUSE connection behind a lazily detached mount, so that processes still holding
   * files in it get ECONNABORTED and libfuse's loop ends now. Needs fusectl mounted; without it
   * the loop ends when the last of those files is closed.
   */
  public static void abortConnection(MountInfo mount) {
    String[] majorMinor = mount.device().split(":");
    if (majorMinor.length != 2 || !"0".equals(majorMinor[0])) {
      return;
    }
    Path abort = CONNECTIONS.resolve(majorMinor[1]).resolve("abort");
    if (Files.isWritable(abort)) {
      try {
        Files.writeString(abort, "1");
      } catch (IOException e) {
        LOG.log(Level.WARNING, "cannot abort FUSE connection {0}: {1}", abort, e.toString());
      }
    }
  }
}
