package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.MountInfo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** auto_unmount: the mount of a JVM killed with SIGKILL goes away by itself. */
@Timeout(60)
class KilledNodeTest {

  /** The node: mounts a MemoryVfs at args[0], says READY, waits to be killed. */
  public static void main(String[] args) throws Exception {
    TestMount.mount(new MemoryVfs(), Path.of(args[0]), true);
    System.out.println("READY");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }

  @Test
  void killedJvmLeavesNoMount() throws Exception {
    Path dir = Files.createTempDirectory("etcfs-fuse-killed");
    Process node = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"),
            KilledNodeTest.class.getName(), dir.toString())
        .redirectErrorStream(true)
        .start();
    try {
      BufferedReader out = new BufferedReader(
          new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null && !line.equals("READY")) {
        System.out.println("node: " + line);
      }
      assertEquals("READY", line);
      assertTrue(MountInfo.at(dir).isPresent());
      node.destroyForcibly(); // SIGKILL: no shutdown hook, no unmount from the JVM
      assertTrue(node.waitFor(10, TimeUnit.SECONDS));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (MountInfo.at(dir).isPresent() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
      assertTrue(MountInfo.at(dir).isEmpty(), "auto_unmount removed the dead mount");
    } finally {
      node.destroyForcibly();
      TestMount.forceUnmount(dir);
      Files.deleteIfExists(dir);
    }
  }
}
