package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code DIR/cluster.env} of a local cluster: shell-sourceable {@code KEY=value} lines
 * (ETCFS_ETCD, ETCFS_DEVICE, ETCFS_FS, ETCFS_DIR) so scripts and later commands reach it.
 */
record ClusterEnv(String etcd, Path device, String fsName, Path dir, boolean ownEtcd) {

  static Path file(Path dir) {
    return dir.resolve("cluster.env");
  }

  void write() throws IOException {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("ETCFS_ETCD", etcd);
    m.put("ETCFS_DEVICE", device.toString());
    m.put("ETCFS_FS", fsName);
    m.put("ETCFS_DIR", dir.toString());
    m.put("ETCFS_OWN_ETCD", Boolean.toString(ownEtcd));
    StringBuilder sb = new StringBuilder();
    m.forEach((k, v) -> sb.append(k).append("='").append(v).append("'\n"));
    Files.writeString(file(dir), sb.toString());
  }

  static ClusterEnv read(Path dir) {
    Path f = file(dir);
    if (!Files.exists(f)) {
      throw new UserError("no local cluster in " + dir + " (" + f + " is missing)");
    }
    Map<String, String> m = new LinkedHashMap<>();
    try {
      for (String line : Files.readAllLines(f)) {
        int eq = line.indexOf('=');
        if (eq > 0) {
          m.put(line.substring(0, eq), line.substring(eq + 1).replaceAll("^'|'$", ""));
        }
      }
    } catch (IOException e) {
      throw new UserError("cannot read " + f + ": " + e.getMessage());
    }
    return new ClusterEnv(req(m, "ETCFS_ETCD", f), Path.of(req(m, "ETCFS_DEVICE", f)),
        req(m, "ETCFS_FS", f), dir, Boolean.parseBoolean(m.getOrDefault("ETCFS_OWN_ETCD", "false")));
  }

  private static String req(Map<String, String> m, String k, Path f) {
    String v = m.get(k);
    if (v == null) {
      throw new UserError(f + " lacks " + k);
    }
    return v;
  }
}
