package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The CLI against an etcd with authentication on: right and wrong credentials. */
@Timeout(300)
@ExtendWith(EtcdExtension.class)
class EtcdAuthIT {
  private static final Duration T = Duration.ofSeconds(120);
  @TempDir Path tmp;

  @Test
  void wrongCredentialsAreOneLineAndRightOnesWork(EtcdCluster etcd) throws Exception {
    etcdctl(etcd, "user", "add", "root:s3cret");
    etcdctl(etcd, "auth", "enable");
    Path runtime = Files.createDirectories(tmp.resolve("rt"));
    Path good = Files.writeString(tmp.resolve("good"), "s3cret\n");
    Path bad = Files.writeString(tmp.resolve("bad"), "guess\n");
    Path image = tmp.resolve("dev.img");

    Distribution.Result ok = Distribution.etcfs(runtime, T, "format", image.toString(), "--size",
        "256M", "--etcd", etcd.endpoints(), "--etcd-user", "root", "--etcd-password-file",
        good.toString());
    assertEquals(0, ok.exit(), ok.toString());

    Distribution.Result wrong = Distribution.etcfs(runtime, T, "status", "--etcd",
        etcd.endpoints(), "--etcd-user", "root", "--etcd-password-file", bad.toString());
    assertEquals(1, wrong.exit(), wrong.toString());
    assertEquals(List.of("etcfs: etcd at " + etcd.endpoints()
        + " refused the credentials for user 'root'"), wrong.errLines(), wrong.toString());

    Distribution.Result none = Distribution.etcfs(runtime, T, "status", "--etcd",
        etcd.endpoints());
    assertEquals(1, none.exit(), none.toString());
    assertEquals(1, none.errLines().size(), none.toString());
    assertTrue(none.err().contains("etcd auth is on"), none.toString());

    Distribution.Result missing = Distribution.etcfs(runtime, T, "status", "--etcd",
        etcd.endpoints(), "--etcd-user", "root", "--etcd-password-file",
        tmp.resolve("nofile").toString());
    assertEquals(List.of("etcfs: cannot read " + tmp.resolve("nofile")), missing.errLines());
  }

  private static void etcdctl(EtcdCluster etcd, String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("etcdctl", "--endpoints",
        etcd.endpoints()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("ETCDCTL_API", "3");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, cmd + ": " + out);
  }
}
