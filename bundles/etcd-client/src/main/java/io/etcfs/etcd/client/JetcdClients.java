package io.etcfs.etcd.client;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/** Builds the jetcd {@link Client} for a set of {@link EtcdSettings}. */
final class JetcdClients {
  private JetcdClients() {}

  /** Must run with the bundle's class loader as the thread context loader (vert.x needs one). */
  static Client build(EtcdSettings settings) {
    ClientBuilder builder = Client.builder()
        .endpoints(settings.endpoints().toArray(String[]::new))
        .connectTimeout(settings.requestTimeout())
        // jetcd retries idempotent calls with back-off; ending its retries well inside our own
        // bound lets the real cause (refused, TLS) reach the caller instead of a bare timeout.
        .retryMaxDuration(settings.requestTimeout().dividedBy(2))
        // Fail fast when no endpoint accepts connections, so that the error says why (refused,
        // TLS, unknown host) instead of only "timed out". Calls made while gRPC is still trying
        // the other endpoints are queued, which is what a member outage needs.
        .waitForReady(false);
    if (settings.user() != null) {
      builder.user(utf8(settings.user())).password(utf8(nullToEmpty(settings.password())));
    }
    if (settings.tls()) {
      builder.sslContext(sslContext(settings));
    }
    return builder.build();
  }

  private static SslContext sslContext(EtcdSettings settings) {
    SslContextBuilder ssl = GrpcSslContexts.forClient();
    if (settings.caFile() != null) {
      ssl.trustManager(readable(settings.caFile(), "CA file").toFile());
    }
    if (settings.certFile() != null) {
      keyManager(ssl, readable(settings.certFile(), "certificate"), readable(settings.keyFile(), "key"));
    }
    try {
      return ssl.build();
    } catch (SSLException | RuntimeException e) {
      throw new MetaStoreException(Kind.OTHER, "cannot set up TLS for etcd at "
          + settings.describeEndpoints() + ": " + EtcdErrors.oneLine(e), e);
    }
  }

  private static void keyManager(SslContextBuilder ssl, Path cert, Path key) {
    try {
      ssl.keyManager(cert.toFile(), key.toFile());
    } catch (IllegalArgumentException e) {
      throw new MetaStoreException(Kind.OTHER, "cannot read the TLS client key " + key
          + " with certificate " + cert + ": the key must be an unencrypted PKCS#8 PEM file"
          + " (convert it with: openssl pkcs8 -topk8 -nocrypt -in " + key + " -out key.pk8.pem)", e);
    }
  }

  private static Path readable(Path file, String what) {
    if (!Files.isReadable(file)) {
      throw new MetaStoreException(Kind.OTHER, "cannot read the TLS " + what + " " + file);
    }
    return file;
  }

  private static ByteSequence utf8(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
