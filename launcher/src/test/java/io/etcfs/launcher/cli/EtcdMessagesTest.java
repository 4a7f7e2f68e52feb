package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.core.format.FilesystemCheck;
import io.etcfs.core.format.FormatException;
import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.testing.EtcdCluster;
import io.etcfs.testing.EtcdExtension;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The lines a user reads about etcd, against a real etcd: each names it once. */
@Timeout(60)
@ExtendWith(EtcdExtension.class)
class EtcdMessagesTest {
  @TempDir Path tmp;

  @Test
  void aMissingFilesystemNamesEtcdOnce(EtcdCluster etcd) {
    try (EtcdMetaStore store = EtcdMetaStore.connect(EtcdSettings.of(etcd.endpoints()))) {
      FormatException e = assertThrows(FormatException.class,
          () -> FilesystemCheck.verify(store, "x", tmp.resolve("dev.img")));
      assertEquals("no filesystem 'x' in etcd at " + etcd.endpoints()
          + " (run 'etcfs format' first)", e.getMessage());
    }
  }

  @Test
  void statusOfAMissingFilesystemNamesEtcdOnce(EtcdCluster etcd) {
    assertEquals("etcfs: no filesystem 'x' in etcd at " + etcd.endpoints(),
        lastEtcfsLine(stderrOf("status", "--etcd", etcd.endpoints(), "--name", "x")));
  }

  /** The CLI's own line; gRPC may log to the same stream when called in-process. */
  private static String lastEtcfsLine(String err) {
    return err.lines().filter(l -> l.startsWith("etcfs: ")).reduce((a, b) -> b).orElse(err);
  }

  private static String stderrOf(String... args) {
    PrintStream saved = System.err;
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    try {
      System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
      assertEquals(1, Main.run(args));
    } finally {
      System.setErr(saved);
    }
    return err.toString(StandardCharsets.UTF_8);
  }
}
