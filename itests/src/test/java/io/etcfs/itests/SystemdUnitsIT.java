package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.launcher.node.ExitStatus;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The systemd units the tarball ships ({@code etc/systemd/}), as unpacked from it: {@code
 * systemd-analyze verify} finds nothing to say about them, with their {@code /opt/etcfs} paths
 * pointing into the unpacked tarball (verify checks that every command exists). A missing
 * {@code systemd-analyze} fails: ./run installs Debian's {@code systemd} package for it.
 */
@Timeout(120)
class SystemdUnitsIT {
  /** Where the units expect the tarball: the README's install step. */
  static final String INSTALL_DIR = "/opt/etcfs";

  @TempDir Path tmp;

  private static Path unitsDir() throws Exception {
    return Distribution.home().resolve("etc/systemd");
  }

  /** The shipped units, copied with their install paths into the unpacked tarball. */
  private List<Path> installed() throws Exception {
    List<Path> out = new ArrayList<>();
    try (Stream<Path> s = Files.list(unitsDir())) {
      for (Path unit : s.filter(p -> p.toString().endsWith(".service")).sorted().toList()) {
        String text = Files.readString(unit).replace(INSTALL_DIR + "/",
            Distribution.home().toAbsolutePath() + "/");
        out.add(Files.writeString(tmp.resolve(unit.getFileName()), text));
      }
    }
    return out;
  }

  private static Distribution.Result verify(List<Path> units) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("systemd-analyze", "verify"));
    units.forEach(u -> cmd.add(u.toString()));
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new AssertionError("systemd-analyze is missing (" + e.getMessage() + "): install "
          + "Debian's systemd package (./run test does) to verify the service units", e);
    }
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("systemd-analyze verify did not finish: " + out);
    }
    return new Distribution.Result(p.exitValue(), out, "");
  }

  @Test
  void systemdAnalyzeVerifyFindsNothingInTheShippedUnits() throws Exception {
    List<Path> units = installed();
    Set<String> names = new HashSet<>();
    units.forEach(u -> names.add(u.getFileName().toString()));
    assertEquals(Set.of("etcfs@.service", "etcfs-etcd.service"), names, "the units shipped");
    for (Path unit : units) {
      Distribution.Result r = verify(List.of(unit));
      assertEquals("", r.out(), "systemd-analyze verify " + unit.getFileName() + " reported");
      assertEquals(0, r.exit(), "systemd-analyze verify " + unit.getFileName() + ": " + r);
    }
  }

  /**
   * The same verify reports a command that does not exist and a key systemd does not know: a
   * silent verify above means the units are right, not that verify cannot see here.
   */
  @Test
  void verifyHereReportsAMissingCommandAndAnUnknownKey() throws Exception {
    String unit = Files.readString(installed().stream()
        .filter(u -> u.getFileName().toString().equals("etcfs@.service")).findFirst()
        .orElseThrow());
    Path missing = Files.writeString(tmp.resolve("broken@.service"),
        unit.replace(Distribution.home().toAbsolutePath() + "/bin/etcfs mount",
            tmp.resolve("nowhere/etcfs") + " mount"));
    Distribution.Result r = verify(List.of(missing));
    assertTrue(r.out().contains("is not executable"), r.toString());
    assertTrue(r.exit() != 0, r.toString());
    Path unknown = Files.writeString(tmp.resolve("typo@.service"),
        unit.replace("RestartSec=", "RestartSecs="));
    Distribution.Result t = verify(List.of(unknown));
    assertTrue(t.out().contains("Unknown key"), t.toString());
  }

  /**
   * The restart policy names the node's own statuses: a fenced node (4) and bad usage (2) are
   * never restarted, SIGTERM's clean leave (143) is a success, starts are limited, and the
   * stop is {@code etcfs umount}. Every variable the command lines use is in the example
   * environment file.
   */
  @Test
  void theTemplateUnitNamesTheNodeExitStatusesAndItsExampleEnvironmentIsComplete()
      throws Exception {
    UnitFile u = UnitFile.read(unitsDir().resolve("etcfs@.service"));
    List<String> prevent = List.of(u.one("Service.RestartPreventExitStatus").split("\\s+"));
    assertTrue(prevent.contains(Integer.toString(ExitStatus.FENCED)), prevent.toString());
    assertTrue(prevent.contains(Integer.toString(ExitStatus.USAGE)), prevent.toString());
    assertFalse(prevent.contains(Integer.toString(ExitStatus.LEFT)), prevent.toString());
    assertEquals(Integer.toString(ExitStatus.SIGTERM), u.one("Service.SuccessExitStatus"));
    assertEquals("on-failure", u.one("Service.Restart"));
    assertEquals("exec", u.one("Service.Type"));
    assertFalse(u.one("Unit.StartLimitIntervalSec").isBlank());
    assertTrue(Integer.parseInt(u.one("Unit.StartLimitBurst")) > 0);
    assertTrue(u.one("Service.ExecStop").startsWith(INSTALL_DIR + "/bin/etcfs umount "),
        u.one("Service.ExecStop"));
    assertTrue(u.one("Service.ExecStart").contains(" mount ")
        && u.one("Service.ExecStart").contains(" --foreground"), u.one("Service.ExecStart"));

    Set<String> defined = UnitFile.environment(unitsDir().resolve("prod.env.example")).keySet();
    for (String key : List.of("Service.ExecStart", "Service.ExecStartPost", "Service.ExecStop")) {
      for (String v : UnitFile.variables(u.one(key))) {
        assertTrue(defined.contains(v) || v.equals("MAINPID"),
            key + " uses " + v + ", which prod.env.example does not set");
      }
    }
  }
}
