package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "Deploying on real machines", rehearsed: every host in a network namespace of its
 * own with its own address on a bridge ({@link Hosts}) — three etcd members with TLS (client and
 * peer) and authentication, three nodes sharing one block device (a loop device, so the O_DIRECT
 * block-device path runs) — and no loopback between any two of them. It formats and mounts as
 * the README says, checks coherence, kills a node, stops one etcd member (the cluster goes on)
 * and a second (the nodes fence themselves; nothing acknowledged is lost), brings them back,
 * remounts, checks every file, and runs {@code etcfs fsck} while mounted and once every node
 * is stopped.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class MultiHostIT {
  private static final Duration T = Duration.ofSeconds(180);
  private static final List<String> MEMBERS = List.of("e1", "e2", "e3");
  private static final List<String> NODES = List.of("n1", "n2", "n3");
  @TempDir Path tmp;
  private Hosts hosts;
  private String loop;
  private Path tls;
  private final Map<String, Process> etcd = new LinkedHashMap<>();
  private final Map<String, Path> mounts = new LinkedHashMap<>();
  private boolean authOn;

  @AfterEach
  void tearDown() throws Exception {
    Processes.killAll(tmp);
    for (Process p : etcd.values()) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    for (Path mp : mounts.values()) {
      LocalCluster.unmountQuietly(mp);
    }
    if (loop != null) {
      Sh.run("losetup", "-d", loop);
    }
    if (hosts != null) {
      hosts.close();
    }
  }

  @Test
  void theDeploymentStepsWorkAcrossHostsAndSurviveNodeAndEtcdFailures() throws Exception {
    List<String> all = new ArrayList<>(MEMBERS);
    all.addAll(NODES);
    hosts = Hosts.create(all.toArray(new String[0]));
    certificates();
    for (String m : MEMBERS) {
      startEtcd(m);
    }
    awaitHealthy(MEMBERS);

    // step 1: TLS and authentication, a user with read-write access to /etcfs/ only
    etcdctl("user", "add", "root:" + "r00t-pw");
    etcdctl("role", "add", "etcfs");
    etcdctl("role", "grant-permission", "etcfs", "--prefix=true", "readwrite", "/etcfs/");
    etcdctl("user", "add", "etcfs:" + "etcfs-pw");
    etcdctl("user", "grant-role", "etcfs", "etcfs");
    etcdctl("auth", "enable");
    authOn = true;
    Files.writeString(tmp.resolve("etcfs.pw"), "etcfs-pw\n");

    // step 2: one shared block device
    Path image = tmp.resolve("lun.img");
    try (FileChannel ch = FileChannel.open(image, StandardOpenOption.CREATE_NEW,
        StandardOpenOption.WRITE)) {
      ch.truncate(0).position((512L << 20) - 1).write(ByteBuffer.wrap(new byte[1]));
    }
    loop = Sh.run("losetup", "--find", "--show", image.toString()).ok().out().strip();

    // step 4: format, once
    Distribution.Result f = etcfsOn("n1", etcdArgs("format", loop, "--name", "prod"));
    assertEquals(0, f.exit(), f.toString());
    assertTrue(f.out().contains("mount it with: etcfs mount " + loop + " MOUNTPOINT --etcd "
        + endpoints() + " --etcd-ca " + tls.resolve("ca.pem") + " --etcd-user etcfs"
        + " --etcd-password-file " + tmp.resolve("etcfs.pw") + " --name prod"), f.toString());
    assertTrue(f.out().contains("undo: etcdctl --endpoints " + endpoints() + " --cacert "
        + tls.resolve("ca.pem") + " --user etcfs del --prefix /etcfs/prod/"), f.toString());

    // step 5: mount on every node
    for (String n : NODES) {
      mount(n);
    }

    // a short coherence check: a file written on one host reads the same on the others
    byte[] big = random(3 << 20, 1);
    writeSynced(mounts.get("n1").resolve("big.bin"), big);
    for (String n : List.of("n2", "n3")) {
      assertArrayEquals(sha(big), sha(Files.readAllBytes(mounts.get(n).resolve("big.bin"))),
          "big.bin as " + n + " reads it");
    }
    Files.createDirectory(mounts.get("n1").resolve("shared"));
    for (String n : NODES) {
      Path d = mounts.get(n).resolve("shared");
      Faults.await("shared/ on " + n, T, () -> Files.isDirectory(d));
      for (int i = 0; i < 10; i++) {
        Files.writeString(d.resolve(n + "-" + i), n + " " + i);
      }
    }
    for (String n : NODES) {
      Path d = mounts.get(n).resolve("shared");
      Faults.await("30 entries in shared/ on " + n, T, () -> count(d) == 30);
    }

    // a node dies: another takes its file over
    Path n3File = mounts.get("n3").resolve("n3-file");
    writeSynced(n3File, "written by n3".getBytes());
    long n3 = Processes.pid(tmp.resolve("state/n3/n3.pid")).orElseThrow();
    ProcessHandle.of(n3).orElseThrow().destroyForcibly();
    long killed = System.nanoTime();
    writeSynced(mounts.get("n1").resolve("n3-file"), "taken over by n1".getBytes());
    System.out.printf("n1 took over n3's file %d ms after n3 was killed%n",
        (System.nanoTime() - killed) / 1_000_000);
    assertEquals("taken over by n1", Files.readString(mounts.get("n2").resolve("n3-file")));
    assertEquals(0, etcfsOn("n3", "umount", mounts.get("n3").toString()).exit());

    // one etcd member stops: the cluster goes on
    stopEtcd("e3");
    writeSynced(mounts.get("n2").resolve("after-e3.txt"), "two of three members".getBytes());
    assertEquals("two of three members",
        Files.readString(mounts.get("n1").resolve("after-e3.txt")));

    // a second one stops: no quorum; the nodes fence themselves, and what was acknowledged stays
    byte[] acked = random(1 << 20, 2);
    writeSynced(mounts.get("n1").resolve("acked.bin"), acked);
    stopEtcd("e2");
    long lost = System.nanoTime();
    for (String n : List.of("n1", "n2")) {
      Path log = tmp.resolve("state/" + n + "/" + n + ".log");
      Faults.await(n + " fenced itself", Duration.ofSeconds(90),
          () -> Files.readString(log).contains(n + " fenced itself out of prod"));
      Path probe = mounts.get(n).resolve("probe");
      Faults.await(n + " fenced (a write fails)", Duration.ofSeconds(90), () -> {
        try {
          writeSynced(probe, "x".getBytes());
          return false;
        } catch (IOException e) {
          return true;
        }
      });
    }
    System.out.printf("both nodes fenced themselves within %d ms of etcd losing its quorum%n",
        (System.nanoTime() - lost) / 1_000_000);

    // the members come back; every node is mounted again, as a new incarnation
    startEtcd("e2");
    startEtcd("e3");
    awaitHealthy(MEMBERS);
    for (String n : List.of("n1", "n2")) {
      Distribution.Result u = etcfsOn(n, "umount", mounts.get(n).toString());
      assertEquals(0, u.exit(), u.toString());
    }
    for (String n : NODES) {
      mount(n);
    }
    assertArrayEquals(sha(acked), sha(Files.readAllBytes(mounts.get("n3").resolve("acked.bin"))),
        "acknowledged before etcd lost its quorum");
    assertArrayEquals(sha(big), sha(Files.readAllBytes(mounts.get("n2").resolve("big.bin"))));
    assertEquals("taken over by n1", Files.readString(mounts.get("n3").resolve("n3-file")));
    assertEquals(30, count(mounts.get("n2").resolve("shared")));
    Distribution.Result online = etcfsOn("n2", etcdArgs("fsck", "--name", "prod", "--device",
        loop));
    assertEquals(0, online.exit(), "fsck while mounted: " + online);
    for (String n : NODES) {
      Distribution.Result u = etcfsOn(n, "umount", mounts.get(n).toString());
      assertEquals(0, u.exit(), u.toString());
    }
    Distribution.Result st = etcfsOn("n1", etcdArgs("status", "--name", "prod"));
    assertEquals(0, st.exit(), st.toString());
    assertTrue(st.out().contains("members     0"), st.toString());
    Distribution.Result offline = etcfsOn("n3", etcdArgs("fsck", "--name", "prod", "--device",
        loop));
    assertEquals(0, offline.exit(), "fsck with every node stopped: " + offline);
  }

  /** A CA, and for every etcd member a certificate for its address (server and peer). */
  private void certificates() throws Exception {
    tls = Files.createDirectories(tmp.resolve("tls"));
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
        "/CN=etcfs rehearsal CA", "-keyout", tls.resolve("ca.key").toString(), "-out",
        tls.resolve("ca.pem").toString());
    for (String m : MEMBERS) {
      Path ext = Files.writeString(tls.resolve(m + ".ext"), "subjectAltName=IP:"
          + hosts.address(m) + "\nextendedKeyUsage=serverAuth,clientAuth\n");
      openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + m, "-keyout",
          tls.resolve(m + ".key").toString(), "-out", tls.resolve(m + ".csr").toString());
      openssl("x509", "-req", "-days", "2", "-in", tls.resolve(m + ".csr").toString(), "-CA",
          tls.resolve("ca.pem").toString(), "-CAkey", tls.resolve("ca.key").toString(),
          "-CAcreateserial", "-extfile", ext.toString(), "-out",
          tls.resolve(m + ".pem").toString());
    }
  }

  private static void openssl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Sh.run(cmd.toArray(new String[0])).ok();
  }

  private void startEtcd(String m) throws Exception {
    String a = hosts.address(m);
    StringBuilder initial = new StringBuilder();
    for (String other : MEMBERS) {
      initial.append(initial.length() == 0 ? "" : ",").append(other).append("=https://")
          .append(hosts.address(other)).append(":2380");
    }
    List<String> cmd = new ArrayList<>(hosts.prefix(m));
    cmd.addAll(List.of("etcd", "--name", m, "--data-dir", tmp.resolve("etcd/" + m).toString(),
        "--listen-client-urls", "https://" + a + ":2379",
        "--advertise-client-urls", "https://" + a + ":2379",
        "--listen-peer-urls", "https://" + a + ":2380",
        "--initial-advertise-peer-urls", "https://" + a + ":2380",
        "--initial-cluster", initial.toString(), "--initial-cluster-state", "new",
        "--initial-cluster-token", "etcfs-rehearsal",
        "--cert-file", tls.resolve(m + ".pem").toString(),
        "--key-file", tls.resolve(m + ".key").toString(),
        "--peer-cert-file", tls.resolve(m + ".pem").toString(),
        "--peer-key-file", tls.resolve(m + ".key").toString(),
        "--peer-trusted-ca-file", tls.resolve("ca.pem").toString(),
        "--peer-client-cert-auth"));
    Files.createDirectories(tmp.resolve("pids"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(tmp.resolve("etcd-" + m + ".log").toFile()))
        .start();
    etcd.put(m, p);
    Files.writeString(tmp.resolve("pids/etcd-" + m + ".pid"), Long.toString(p.pid()));
  }

  private void stopEtcd(String m) throws Exception {
    Process p = etcd.remove(m);
    p.destroy();
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "etcd " + m + " did not stop");
  }

  private void awaitHealthy(List<String> members) throws Exception {
    for (String m : members) {
      Faults.await("etcd " + m + " healthy", T, () -> {
        List<String> cmd = new ArrayList<>(hosts.prefix("n1"));
        cmd.addAll(List.of("etcdctl", "--endpoints", "https://" + hosts.address(m) + ":2379",
            "--cacert", tls.resolve("ca.pem").toString(), "--command-timeout", "3s"));
        if (authOn) {
          cmd.addAll(List.of("--user", "root:r00t-pw"));
        }
        cmd.addAll(List.of("endpoint", "health"));
        Sh.Out out = Sh.run(cmd.toArray(new String[0]));
        return out.exit() == 0 || (out.out() + out.err()).contains("is healthy");
      });
    }
  }

  /** etcdctl as root (once there is one) against every member, from host n1. */
  private void etcdctl(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(hosts.prefix("n1"));
    cmd.addAll(List.of("etcdctl", "--endpoints", endpoints(), "--cacert",
        tls.resolve("ca.pem").toString()));
    if (!args[0].equals("user") || !args[1].equals("add") || !args[2].startsWith("root:")) {
      cmd.addAll(List.of("--user", "root:r00t-pw"));
    }
    cmd.addAll(List.of(args));
    Sh.run(cmd.toArray(new String[0])).ok();
  }

  private String endpoints() {
    StringBuilder b = new StringBuilder();
    for (String m : MEMBERS) {
      b.append(b.length() == 0 ? "" : ",").append("https://").append(hosts.address(m))
          .append(":2379");
    }
    return b.toString();
  }

  /** {@code extra} followed by the etcd options every command of the README takes. */
  private String[] etcdArgs(String... extra) {
    List<String> args = new ArrayList<>(List.of(extra));
    args.addAll(List.of("--etcd", endpoints(), "--etcd-ca", tls.resolve("ca.pem").toString(),
        "--etcd-user", "etcfs", "--etcd-password-file", tmp.resolve("etcfs.pw").toString()));
    return args.toArray(new String[0]);
  }

  /** Mounts the device on node {@code n}, waiting while its last incarnation's lease lives. */
  private void mount(String n) throws Exception {
    Path mp = Files.createDirectories(tmp.resolve("mnt/" + n));
    mounts.put(n, mp);
    String[] args = etcdArgs("mount", loop, mp.toString(), "--name", "prod", "--node", n,
        "--state-dir", tmp.resolve("state/" + n).toString());
    long deadline = System.nanoTime() + T.toNanos();
    Distribution.Result r = etcfsOn(n, args);
    while (r.exit() != 0 && r.err().contains("already a member")
        && System.nanoTime() < deadline) {
      Thread.sleep(500);
      r = etcfsOn(n, args);
    }
    assertEquals(0, r.exit(), r.toString());
  }

  private Distribution.Result etcfsOn(String host, String first, String... rest)
      throws Exception {
    String[] args = new String[rest.length + 1];
    args[0] = first;
    System.arraycopy(rest, 0, args, 1, rest.length);
    return etcfsOn(host, args);
  }

  private Distribution.Result etcfsOn(String host, String[] args) throws Exception {
    Path runtime = Files.createDirectories(tmp.resolve("rt/" + host));
    ProcessBuilder pb = Distribution.command(runtime, Map.of(), args);
    pb.command().addAll(0, hosts.prefix(host));
    return Distribution.run(pb, T, null, args);
  }

  private static void writeSynced(Path p, byte[] data) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE,
        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer b = ByteBuffer.wrap(data);
      while (b.hasRemaining()) {
        ch.write(b);
      }
      ch.force(true);
    }
  }

  private static byte[] random(int size, long seed) {
    byte[] b = new byte[size];
    new java.util.Random(seed).nextBytes(b);
    return b;
  }

  private static byte[] sha(byte[] data) throws Exception {
    return MessageDigest.getInstance("SHA-256").digest(data);
  }

  private static long count(Path dir) throws IOException {
    try (var s = Files.list(dir)) {
      return s.count();
    }
  }
}
