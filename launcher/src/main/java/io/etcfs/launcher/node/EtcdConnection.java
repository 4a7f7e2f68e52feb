package io.etcfs.launcher.node;

import java.util.Properties;

/**
 * How to reach etcd, as the user gave it: endpoints, TLS files and credentials. Kept as strings
 * so that the node JVM, which has no jetcd on its class path, can pass them on to the etcd-client
 * bundle's configuration.
 *
 * @param endpoints comma-separated client URLs
 * @param caFile the CA certificate (PEM) for TLS, or empty
 * @param certFile the client certificate (PEM), or empty
 * @param keyFile the client key (PKCS#8 PEM), or empty
 * @param user the etcd user, or empty
 * @param password the etcd password, or empty
 */
public record EtcdConnection(
    String endpoints, String caFile, String certFile, String keyFile, String user, String password) {

  public static EtcdConnection of(String endpoints) {
    return new EtcdConnection(endpoints, "", "", "", "", "");
  }

  void store(Properties p) {
    p.setProperty("etcd.endpoints", endpoints);
    p.setProperty("etcd.caFile", caFile);
    p.setProperty("etcd.certFile", certFile);
    p.setProperty("etcd.keyFile", keyFile);
    p.setProperty("etcd.user", user);
    p.setProperty("etcd.password", password);
  }

  static EtcdConnection load(Properties p) {
    return new EtcdConnection(
        p.getProperty("etcd.endpoints", ""),
        p.getProperty("etcd.caFile", ""),
        p.getProperty("etcd.certFile", ""),
        p.getProperty("etcd.keyFile", ""),
        p.getProperty("etcd.user", ""),
        p.getProperty("etcd.password", ""));
  }
}
