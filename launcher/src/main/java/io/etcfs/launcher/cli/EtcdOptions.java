package io.etcfs.launcher.cli;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.etcd.client.EtcdSettings;
import io.etcfs.launcher.UserError;
import io.etcfs.launcher.node.EtcdConnection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/** How a command reaches etcd: endpoints, TLS and credentials, from options or environment. */
final class EtcdOptions {
  @Option(names = "--etcd", paramLabel = "URLS",
      description = "etcd client URLs, comma-separated (default: $ETCFS_ETCD).")
  String endpoints;

  @Option(names = "--etcd-ca", paramLabel = "FILE",
      description = "CA certificate (PEM) for TLS (default: $ETCFS_ETCD_CA).")
  Path ca;

  @Option(names = "--etcd-cert", paramLabel = "FILE",
      description = "Client certificate (PEM) (default: $ETCFS_ETCD_CERT).")
  Path cert;

  @Option(names = "--etcd-key", paramLabel = "FILE",
      description = "Client key (PKCS#8 PEM) (default: $ETCFS_ETCD_KEY).")
  Path key;

  @Option(names = "--etcd-user", paramLabel = "NAME",
      description = "etcd user name (default: $ETCFS_ETCD_USER).")
  String user;

  @Option(names = "--etcd-password-file", paramLabel = "FILE",
      description = "File holding the etcd password (default: $ETCFS_ETCD_PASSWORD_FILE, "
          + "else the password in $ETCFS_ETCD_PASSWORD).")
  Path passwordFile;

  /**
   * Where an option not given is looked up: the environment, whose {@code ETCFS_ETCD_*} variables
   * stand for the options (an empty one counts as unset), so that a service unit's environment
   * file can carry the whole connection.
   */
  java.util.function.UnaryOperator<String> env = System::getenv;

  private Path fileOr(Path given, String variable) {
    if (given != null) {
      return given;
    }
    String v = env.apply(variable);
    return v == null || v.isBlank() ? null : Path.of(v.strip());
  }

  boolean given() {
    return endpoints != null || env.apply("ETCFS_ETCD") != null;
  }

  String endpoints() {
    String e = endpoints != null ? endpoints : env.apply("ETCFS_ETCD");
    if (e == null || e.isBlank()) {
      throw new UserError("no etcd endpoints: give --etcd URLS or set ETCFS_ETCD");
    }
    return e;
  }

  /**
   * These options as {@code etcfs} takes them after {@code --etcd URLS} (TLS files, user,
   * password file; never a password), for the commands a command prints to run next.
   */
  String cliTail() {
    StringBuilder b = new StringBuilder();
    appendIf(b, "--etcd-ca", ca);
    appendIf(b, "--etcd-cert", cert);
    appendIf(b, "--etcd-key", key);
    appendIf(b, "--etcd-user", user);
    appendIf(b, "--etcd-password-file", passwordFile);
    return b.toString();
  }

  /** As {@link #cliTail}, as etcdctl takes them (its password is asked for, never printed). */
  String etcdctlTail() {
    StringBuilder b = new StringBuilder();
    appendIf(b, "--cacert", ca);
    appendIf(b, "--cert", cert);
    appendIf(b, "--key", key);
    appendIf(b, "--user", user);
    return b.toString();
  }

  private static void appendIf(StringBuilder b, String option, Object value) {
    if (value != null) {
      b.append(' ').append(option).append(' ').append(value);
    }
  }

  EtcdConnection connection() {
    Path ca = fileOr(this.ca, "ETCFS_ETCD_CA");
    Path cert = fileOr(this.cert, "ETCFS_ETCD_CERT");
    Path key = fileOr(this.key, "ETCFS_ETCD_KEY");
    Path passwordFile = fileOr(this.passwordFile, "ETCFS_ETCD_PASSWORD_FILE");
    for (Path f : new Path[] {ca, cert, key, passwordFile}) {
      if (f != null && !Files.isReadable(f)) {
        throw new UserError("cannot read " + f);
      }
    }
    String user = this.user != null ? this.user : env.apply("ETCFS_ETCD_USER");
    return new EtcdConnection(endpoints(), str(ca), str(cert), str(key),
        user == null ? "" : user.strip(), password(passwordFile));
  }

  private String password(Path passwordFile) {
    if (passwordFile != null) {
      try {
        return Files.readString(passwordFile).strip();
      } catch (java.io.IOException e) {
        throw new UserError("cannot read " + passwordFile + ": " + e.getMessage());
      }
    }
    String pw = env.apply("ETCFS_ETCD_PASSWORD");
    return pw == null ? "" : pw;
  }

  /** A filesystem in an etcd: where to connect and its name. */
  record Filesystem(EtcdConnection connection, String name) {}

  /**
   * The filesystem a command is about: a local cluster's ({@code dir}, made by {@code etcfs
   * up}) or the one named {@code name} (default etcfs) in the etcd these options reach.
   */
  Filesystem filesystem(java.nio.file.Path dir, String name) throws java.io.IOException {
    if (dir != null && endpoints != null) {
      throw new UserError("give either --dir or --etcd, not both");
    }
    if (dir != null) {
      ClusterEnv env = ClusterEnv.read(dir);
      return new Filesystem(EtcdConnection.of(env.etcd()), name != null ? name : env.fsName());
    }
    return new Filesystem(connection(), name != null ? name : "etcfs");
  }

  /** Connects, checking the endpoints and credentials with one bounded request. */
  EtcdMetaStore connect() {
    return connect(connection());
  }

  /**
   * The bound on each request of a CLI command. Longer than a node's 5 s (a FUSE call must not
   * hang on etcd; a command may wait): the command's first request also sets up the channel in a
   * new JVM, and a busy cluster's etcd (the shared allocator's transactions, say) answers late.
   */
  static final Duration CLI_REQUEST_TIMEOUT = Duration.ofSeconds(15);

  static EtcdMetaStore connect(EtcdConnection c) {
    EtcdSettings s = new EtcdSettings(
        EtcdSettings.parseEndpoints(c.endpoints()),
        path(c.caFile()), path(c.certFile()), path(c.keyFile()),
        blankToNull(c.user()), blankToNull(c.password()), CLI_REQUEST_TIMEOUT);
    return EtcdMetaStore.connect(s);
  }

  private static String str(Path p) {
    return p == null ? "" : p.toAbsolutePath().toString();
  }

  private static Path path(String s) {
    return s.isEmpty() ? null : Path.of(s);
  }

  private static String blankToNull(String s) {
    return s.isEmpty() ? null : s;
  }
}
