package io.etcfs.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.launcher.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The launcher runs outside the framework, with etcfs's jars on a plain class path, so the
 * compiler would let it use any class of any bundle. It may use only what is a contract: the
 * API, the support library, the core's exported format and check packages, and the etcd client's library
 * packages. A bundle's internals change without notice. This reads the compiled classes' real
 * dependencies with {@code jdeps}, so a fully qualified name is caught as well as an import.
 */
@Timeout(120)
class BundleBoundaryTest {
  private static final Pattern ALLOWED = Pattern.compile(
      "io\\.etcfs\\.(launcher(\\..*)?|spi\\..*|support\\..*|core\\.format|core\\.check|etcd\\.client"
          + "|etcd\\.local)");

  @Test
  void theLauncherUsesNoBundleInternals() throws Exception {
    Path classes = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow();
    StringWriter out = new StringWriter();
    int status = jdeps.run(new PrintWriter(out), new PrintWriter(out), "-verbose:package",
        classes.toString());
    assertEquals(0, status, out.toString());
    Matcher m = Pattern.compile("(?m)^\\s+(\\S+)\\s+->\\s+(io\\.etcfs\\.\\S+)")
        .matcher(out.toString());
    Set<String> used = new TreeSet<>();
    Set<String> forbidden = new TreeSet<>();
    while (m.find()) {
      used.add(m.group(2));
      if (!ALLOWED.matcher(m.group(2)).matches()) {
        forbidden.add(m.group(1) + " -> " + m.group(2));
      }
    }
    assertTrue(used.contains("io.etcfs.etcd.client") && used.contains("io.etcfs.core.format"),
        "jdeps saw none of the launcher's known dependencies; its output changed? " + used);
    assertEquals(Set.of(), forbidden, "the launcher uses bundle internals");
  }
}
