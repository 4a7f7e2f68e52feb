package io.etcfs.launcher.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.EtcdConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The etcd connection from ETCFS_ETCD_* variables, as a service unit's environment file gives
 * them: each stands for its option, an option given wins, an empty one counts as unset.
 */
class EtcdOptionsEnvTest {
  @TempDir Path tmp;

  private EtcdOptions options(Map<String, String> env) {
    EtcdOptions o = new EtcdOptions();
    o.env = env::get;
    return o;
  }

  @Test
  void theVariablesStandForTheOptions() throws Exception {
    Path ca = Files.writeString(tmp.resolve("ca.pem"), "ca");
    Path cert = Files.writeString(tmp.resolve("c.pem"), "cert");
    Path key = Files.writeString(tmp.resolve("k.pem"), "key");
    Path pw = Files.writeString(tmp.resolve("pw"), "s3cret\n");
    EtcdConnection c = options(Map.of("ETCFS_ETCD", "https://e1:2379,https://e2:2379",
        "ETCFS_ETCD_CA", ca.toString(), "ETCFS_ETCD_CERT", cert.toString(),
        "ETCFS_ETCD_KEY", key.toString(), "ETCFS_ETCD_USER", "etcfs",
        "ETCFS_ETCD_PASSWORD_FILE", pw.toString())).connection();
    assertEquals(new EtcdConnection("https://e1:2379,https://e2:2379", ca.toString(),
        cert.toString(), key.toString(), "etcfs", "s3cret"), c);
  }

  @Test
  void emptyVariablesAreUnsetAndOptionsWin() throws Exception {
    Map<String, String> env = new HashMap<>(Map.of("ETCFS_ETCD", "http://e1:2379",
        "ETCFS_ETCD_CA", "", "ETCFS_ETCD_CERT", " ", "ETCFS_ETCD_KEY", "",
        "ETCFS_ETCD_USER", "", "ETCFS_ETCD_PASSWORD_FILE", "", "ETCFS_ETCD_PASSWORD", "pw"));
    EtcdOptions o = options(env);
    assertEquals(new EtcdConnection("http://e1:2379", "", "", "", "", "pw"), o.connection());
    o.endpoints = "http://other:2379";
    o.user = "root";
    env.put("ETCFS_ETCD_USER", "etcfs");
    EtcdConnection c = o.connection();
    assertEquals("http://other:2379", c.endpoints());
    assertEquals("root", c.user());
  }

  @Test
  void aFileNamedByAVariableThatCannotBeReadIsOneLine() {
    EtcdOptions o = options(Map.of("ETCFS_ETCD", "http://e1:2379",
        "ETCFS_ETCD_CA", tmp.resolve("missing.pem").toString()));
    UserError e = assertThrows(UserError.class, o::connection);
    assertEquals("cannot read " + tmp.resolve("missing.pem"), e.getMessage());
  }
}
