package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.launcher.node.ExitStatus;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code etcfs@.service} from the tarball, run the way systemd would run it where systemd is not
 * PID 1: its command lines read from the unit file and expanded with an environment file made
 * from the shipped example, against a real etcd and an image file. ExecStart runs the node in
 * the foreground, ExecStartPost waits until it serves, a second ExecStart for the same
 * mountpoint is refused with the CLI's one line, and ExecStop is a clean leave. A node that
 * fenced itself ends with the status the unit's RestartPreventExitStatus= names.
 */
@Timeout(600)
@ExtendWith(EtcdExtension.class)
class UnitsIT {
  private static final String INSTANCE = "prod";
  private static final Duration T = Duration.ofSeconds(200);

  @TempDir Path tmp;
  private String etcd;
  private String fs;
  private Path mp;
  private Path runtime;
  private UnitFile unit;
  private Map<String, String> env;
  private final List<Process> started = new ArrayList<>();

  @BeforeEach
  void setUp(EtcdCluster cluster, TestInfo info) throws Exception {
    etcd = cluster.endpoints();
    fs = "units-" + info.getTestMethod().orElseThrow().getName().toLowerCase()
        .replaceAll("[^a-z]", "");
    fs = fs.substring(0, Math.min(fs.length(), 40));
    runtime = Files.createDirectories(tmp.resolve("rt"));
    mp = Files.createDirectories(tmp.resolve("mnt/" + INSTANCE));
    Path image = tmp.resolve("device.img");
    Distribution.Result f = Distribution.etcfs(runtime, T, "format", image.toString(), "--size",
        "256M", "--etcd", etcd, "--name", fs);
    assertEquals(0, f.exit(), f.toString());

    unit = UnitFile.read(Distribution.home().resolve("etc/systemd/etcfs@.service"));
    // This machine's /etc/etcfs/prod.env: the shipped example with its values for here. The
    // local etcd has neither TLS nor users: those settings are left empty, as the example says.
    Map<String, String> values = new LinkedHashMap<>(Map.of(
        "ETCFS_DEVICE", image.toString(), "ETCFS_MOUNTPOINT", mp.toString(),
        "ETCFS_NAME", fs, "ETCFS_NODE", "n1", "ETCFS_ETCD", etcd,
        "ETCFS_ETCD_CA", "", "ETCFS_ETCD_CERT", "", "ETCFS_ETCD_KEY", "",
        "ETCFS_ETCD_USER", "", "ETCFS_ETCD_PASSWORD_FILE", ""));
    Path etc = Files.createDirectories(tmp.resolve("etc/etcfs"));
    StringBuilder file = new StringBuilder();
    for (String line : Files.readAllLines(
        Distribution.home().resolve("etc/systemd/prod.env.example"))) {
      int eq = line.indexOf('=');
      String key = eq > 0 && !line.startsWith("#") ? line.substring(0, eq) : null;
      file.append(key != null && values.containsKey(key) ? key + "=" + values.get(key) : line)
          .append('\n');
    }
    String envFile = UnitFile.specifiers(unit.one("Service.EnvironmentFile"), INSTANCE);
    assertEquals("/etc/etcfs/" + INSTANCE + ".env", envFile);
    Path written = Files.writeString(etc.resolve(INSTANCE + ".env"), file);
    env = UnitFile.environment(written);
    for (var v : values.entrySet()) {
      assertEquals(v.getValue(), env.get(v.getKey()), "the example sets " + v.getKey());
    }
  }

  @AfterEach
  void cleanUp() throws Exception {
    for (Process p : started) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    Processes.killAll(tmp);
    LocalCluster.unmountQuietly(mp);
  }

  /** A command line of the unit, with the tarball unpacked where the unit expects it. */
  private List<String> commandLine(String key, long mainPid) throws Exception {
    Map<String, String> vars = new LinkedHashMap<>(env);
    if (mainPid > 0) {
      vars.put("MAINPID", Long.toString(mainPid));
    }
    List<String> argv = new ArrayList<>(UnitFile.command(unit.one(key), INSTANCE, vars));
    String exe = argv.get(0);
    assertTrue(exe.startsWith(SystemdUnitsIT.INSTALL_DIR + "/"), key + " runs " + exe);
    argv.set(0, Distribution.home().toAbsolutePath()
        + exe.substring(SystemdUnitsIT.INSTALL_DIR.length()));
    return argv;
  }

  /** The environment systemd gives the unit's processes: the environment file's settings. */
  private ProcessBuilder process(List<String> argv, long mainPid) {
    ProcessBuilder pb = new ProcessBuilder(argv);
    pb.environment().keySet().removeIf(k -> k.startsWith("ETCFS_"));
    pb.environment().putAll(env);
    if (mainPid > 0) {
      pb.environment().put("MAINPID", Long.toString(mainPid));
    }
    // private mount records, so the test never touches the machine's /run/etcfs
    pb.environment().put("ETCFS_RUNTIME_DIR", runtime.toString());
    pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    return pb;
  }

  /** ExecStart, left running as systemd's main process; its output is the unit's journal. */
  private Process execStart(String journal) throws Exception {
    ProcessBuilder pb = process(commandLine("Service.ExecStart", 0), 0);
    pb.redirectErrorStream(true).redirectOutput(tmp.resolve(journal).toFile());
    Process p = pb.start();
    started.add(p);
    return p;
  }

  /** One of the unit's other commands (ExecStartPost, ExecStop, a second ExecStart), run out. */
  private Distribution.Result run(String key, long mainPid) throws Exception {
    ProcessBuilder pb = process(commandLine(key, mainPid), mainPid);
    Path out = tmp.resolve("out.txt");
    Path err = tmp.resolve("err.txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process p = pb.start();
    started.add(p);
    if (!p.waitFor(T.toSeconds(), TimeUnit.SECONDS)) {
      throw new AssertionError(key + " did not finish within " + T + ": " + Files.readString(out)
          + Files.readString(err));
    }
    return new Distribution.Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }

  private String journal(String name) throws Exception {
    return Files.readString(tmp.resolve(name), StandardCharsets.UTF_8);
  }

  private long nodePid() {
    return Processes.pid(runtime.resolve(fs + "-n1/n1.pid"))
        .orElseThrow(() -> new AssertionError("no pid file for node n1"));
  }

  private static void assertNoStackTrace(Distribution.Result r) {
    for (String line : (r.out() + r.err()).lines().toList()) {
      assertFalse(line.startsWith("\tat ") || line.contains("Exception"), "stack trace: " + r);
    }
  }

  /** Starts the unit as systemd does: ExecStart, then ExecStartPost until it says served. */
  private Process startUnit(String journal) throws Exception {
    Process main = execStart(journal);
    Distribution.Result ready = run("Service.ExecStartPost", main.pid());
    assertEquals(0, ready.exit(), ready + "\n--- journal\n" + journal(journal));
    assertEquals(mp + " is served by node n1 (pid " + nodePid() + ")", ready.out().strip());
    assertTrue(main.isAlive(), "ExecStart ended: " + journal(journal));
    assertEquals(Mountinfo.ETCFS, Mountinfo.type(mp));
    return main;
  }

  @Test
  void theUnitMountsRefusesASecondStartForTheSameMountpointAndLeavesCleanly() throws Exception {
    Process main = startUnit("journal-1.txt");
    long node = nodePid();
    long generation = Faults.generation(etcd, fs, "n1");
    assertTrue(generation > 0, "no membership key for n1");
    Files.writeString(mp.resolve("before"), "written through the unit's mount");

    // The same unit started again (or a second instance for the same mountpoint): refused by
    // the CLI before anything starts, in one line, and the running node does not notice.
    Distribution.Result again = run("Service.ExecStart", 0);
    assertEquals(1, again.exit(), again.toString());
    assertEquals(List.of("etcfs: " + mp + " is already served by node n1 (pid " + node
        + "); 'etcfs umount " + mp + "' stops it"), again.errLines(), again.toString());
    assertEquals("", again.out(), again.toString());
    assertNoStackTrace(again);
    assertTrue(main.isAlive() && Processes.alive(node), "the running node stopped");
    assertEquals(generation, Faults.generation(etcd, fs, "n1"), "n1 is another incarnation");
    assertEquals("written through the unit's mount", Files.readString(mp.resolve("before")));
    assertEquals(Mountinfo.ETCFS, Mountinfo.type(mp));

    // ExecStop: the clean leave. The node and ExecStart exit 0; its key and slot are gone.
    Distribution.Result stop = run("Service.ExecStop", main.pid());
    assertEquals(0, stop.exit(), stop.toString());
    assertEquals("node n1 left the cluster cleanly; " + mp + " is no longer served",
        stop.out().strip(), stop.toString());
    assertTrue(main.waitFor(60, TimeUnit.SECONDS), "ExecStart still runs after ExecStop");
    assertEquals(ExitStatus.LEFT, main.exitValue(), journal("journal-1.txt"));
    assertFalse(Processes.alive(node), "node still runs");
    assertEquals(-1, Faults.generation(etcd, fs, "n1"), "membership key left behind");
    assertEquals("", Faults.etcdctl(etcd, "get", "--prefix", "--keys-only",
        "/etcfs/" + fs + "/slots/").strip(), "heartbeat slot left behind");
    assertEquals(null, Mountinfo.type(mp), "mount left behind");
    assertTrue(journal("journal-1.txt").contains("n1 left " + fs), journal("journal-1.txt"));
    System.out.println("UnitsIT, second start refused:\n" + again.err()
        + "UnitsIT, ExecStop: " + stop.out() + "UnitsIT, journal\n" + journal("journal-1.txt"));
  }

  /**
   * systemd's stop without ExecStop (or after it, with KillMode=mixed): SIGTERM to the main
   * process only. The foreground CLI passes it on, the node leaves cleanly, and the unit ends
   * with 143, the status SuccessExitStatus= names.
   */
  @Test
  void sigtermToTheMainProcessIsACleanLeaveThatCountsAsSuccess() throws Exception {
    Process main = startUnit("journal-3.txt");
    long node = nodePid();
    Faults.signal(main.pid(), "TERM");
    assertTrue(main.waitFor(90, TimeUnit.SECONDS), "ExecStart still runs after SIGTERM");
    assertEquals(ExitStatus.SIGTERM, main.exitValue(), journal("journal-3.txt"));
    assertEquals(Integer.toString(ExitStatus.SIGTERM), unit.one("Service.SuccessExitStatus"));
    Faults.await("the node exits", Duration.ofSeconds(30), () -> !Processes.alive(node));
    // a clean leave deletes the key and the heartbeat slot (a lapsed lease only the key); the
    // node's own log lines of a stop by signal are lost: java.util.logging's shutdown hook
    // closes its handlers while the node's hook stops the framework
    assertEquals(-1, Faults.generation(etcd, fs, "n1"), "membership key left behind");
    assertEquals("", Faults.etcdctl(etcd, "get", "--prefix", "--keys-only",
        "/etcfs/" + fs + "/slots/").strip(), "heartbeat slot left behind");
    assertEquals(null, Mountinfo.type(mp), "mount left behind");
  }

  /** Freezes the unit's node past its 3 s lease, then lets it go on: it fences itself. */
  private Process fencedUnit(String journal) throws Exception {
    env.put("ETCFS_OPTIONS", "--lease-ttl 3s");
    Process main = startUnit(journal);
    long node = nodePid();
    Faults.signal(node, "STOP");
    try {
      Faults.await("n1's membership lease expires while it is frozen", Duration.ofSeconds(60),
          () -> Faults.generation(etcd, fs, "n1") < 0);
    } finally {
      Faults.signal(node, "CONT");
    }
    Faults.await("n1 logs that it fenced itself", Duration.ofSeconds(60),
        () -> journal(journal).contains("fenced itself out of " + fs));
    return main;
  }

  private void assertNeverRestarted(Process main, String journal) throws Exception {
    assertEquals(ExitStatus.FENCED, main.exitValue(), journal(journal));
    assertTrue(List.of(unit.one("Service.RestartPreventExitStatus").split("\\s+"))
        .contains(Integer.toString(main.exitValue())), unit.one("Service.RestartPreventExitStatus"));
  }

  /**
   * A node that fenced itself (frozen past its lease) and is then stopped by ExecStop ends the
   * unit's main process with {@link ExitStatus#FENCED}, which RestartPreventExitStatus= names:
   * systemd does not start it again by itself.
   */
  @Test
  void aFencedNodeStoppedByExecStopEndsTheUnitWithTheStatusThatIsNeverRestarted()
      throws Exception {
    Process main = fencedUnit("journal-2.txt");
    Distribution.Result stop = run("Service.ExecStop", main.pid());
    assertEquals(0, stop.exit(), stop.toString());
    assertTrue(stop.out().contains("it had fenced itself earlier"), stop.toString());
    assertTrue(main.waitFor(60, TimeUnit.SECONDS), "ExecStart still runs after ExecStop");
    assertNeverRestarted(main, "journal-2.txt");
    assertEquals(null, Mountinfo.type(mp), "mount left behind");
    System.out.println("UnitsIT, fenced then ExecStop: journal\n" + journal("journal-2.txt"));
  }

  /** The same when the stop is SIGTERM to the main process: 4, not SIGTERM's 143. */
  @Test
  void aFencedNodeStoppedBySigtermEndsTheUnitWithTheStatusThatIsNeverRestarted()
      throws Exception {
    Process main = fencedUnit("journal-4.txt");
    Faults.signal(main.pid(), "TERM");
    assertTrue(main.waitFor(90, TimeUnit.SECONDS), "ExecStart still runs after SIGTERM");
    assertNeverRestarted(main, "journal-4.txt");
  }

  /** This process's view of the mount table. */
  private static final class Mountinfo {
    static final String ETCFS = "fuse.etcfs";

    static String type(Path mountpoint) throws Exception {
      for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
        String[] f = line.split(" ");
        int sep = line.indexOf(" - ");
        if (f.length > 4 && f[4].equals(mountpoint.toString()) && sep > 0) {
          return line.substring(sep + 3).split(" ")[0];
        }
      }
      return null;
    }
  }
}
