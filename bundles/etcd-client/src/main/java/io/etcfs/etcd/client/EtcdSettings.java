package io.etcfs.etcd.client;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * How to reach etcd.
 *
 * @param endpoints client URLs, {@code http://host:port} or {@code https://host:port}
 * @param caFile the CA bundle (PEM) that signed the server certificates; TLS is used when it is set
 *     or an endpoint is {@code https}
 * @param certFile the client certificate (PEM) for client-certificate authentication, or null
 * @param keyFile the client key, an unencrypted PKCS#8 PEM file (netty reads no other form), or
 *     null
 * @param user the etcd user, or null when etcd auth is off
 * @param password the etcd user's password, or null
 * @param requestTimeout the bound on every request (default 5 s)
 */
public record EtcdSettings(
    List<String> endpoints,
    Path caFile,
    Path certFile,
    Path keyFile,
    String user,
    String password,
    Duration requestTimeout) {

  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

  public EtcdSettings {
    endpoints = List.copyOf(endpoints);
    if (endpoints.isEmpty()) {
      throw new IllegalArgumentException("no etcd endpoints given");
    }
    if ((certFile == null) != (keyFile == null)) {
      throw new IllegalArgumentException("a TLS client certificate needs both certFile and keyFile");
    }
    if (requestTimeout == null) {
      requestTimeout = DEFAULT_REQUEST_TIMEOUT;
    }
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("the etcd request timeout must be positive");
    }
  }

  /** Plain-text settings without auth and with the default timeout. */
  public static EtcdSettings of(String commaSeparatedEndpoints) {
    return new EtcdSettings(
        parseEndpoints(commaSeparatedEndpoints), null, null, null, null, null, null);
  }

  public EtcdSettings withCredentials(String newUser, String newPassword) {
    return new EtcdSettings(
        endpoints, caFile, certFile, keyFile, newUser, newPassword, requestTimeout);
  }

  public EtcdSettings withTls(Path newCaFile, Path newCertFile, Path newKeyFile) {
    return new EtcdSettings(
        endpoints, newCaFile, newCertFile, newKeyFile, user, password, requestTimeout);
  }

  public EtcdSettings withRequestTimeout(Duration timeout) {
    return new EtcdSettings(endpoints, caFile, certFile, keyFile, user, password, timeout);
  }

  public boolean tls() {
    return caFile != null || endpoints.stream().anyMatch(e -> e.startsWith("https:"));
  }

  /** The endpoints as one comma-separated string, for messages. */
  public String describeEndpoints() {
    return String.join(",", endpoints);
  }

  /**
   * Splits and checks a comma-separated endpoint list.
   *
   * @throws IllegalArgumentException with a one-line message naming the first bad endpoint
   */
  public static List<String> parseEndpoints(String commaSeparated) {
    List<String> result = new ArrayList<>();
    for (String part : (commaSeparated == null ? "" : commaSeparated).split(",")) {
      String endpoint = part.strip();
      if (!endpoint.isEmpty()) {
        result.add(checkEndpoint(endpoint));
      }
    }
    if (result.isEmpty()) {
      throw new IllegalArgumentException("no etcd endpoints given (expected http://host:port,...)");
    }
    return List.copyOf(result);
  }

  private static String checkEndpoint(String endpoint) {
    URI uri;
    try {
      uri = new URI(endpoint);
    } catch (URISyntaxException e) {
      throw badEndpoint(endpoint, authorityProblem(endpoint).orElse("not a URL"));
    }
    String scheme = uri.getScheme();
    if (scheme == null || !(scheme.equals("http") || scheme.equals("https"))) {
      throw badEndpoint(endpoint, "the scheme must be http or https");
    }
    // java.net.URI gives no host at all for an authority it cannot split into host and port
    // ("127.0.0.1:2379x"), so its null host does not mean the host is missing: say which part
    // is wrong.
    if (uri.getHost() == null || uri.getPort() <= 0 || uri.getPort() > 65535) {
      throw badEndpoint(endpoint, authorityProblem(endpoint)
          .orElse("bad host '" + uri.getRawAuthority().replaceFirst(":[0-9]+$", "") + "'"));
    }
    String path = uri.getRawPath();
    if ((path != null && !path.isEmpty() && !path.equals("/")) || uri.getRawQuery() != null) {
      throw badEndpoint(endpoint, "a client URL has no path or query");
    }
    return scheme + "://" + uri.getRawAuthority();
  }

  /**
   * What is wrong with the {@code host:port} part of an endpoint, if its port is; empty when the
   * port is a valid one (whatever else may be wrong).
   */
  private static Optional<String> authorityProblem(String endpoint) {
    int start = endpoint.indexOf("://");
    if (start < 0) {
      return Optional.empty();
    }
    String authority = endpoint.substring(start + 3).split("[/?#]", 2)[0];
    authority = authority.substring(authority.lastIndexOf('@') + 1);
    String host;
    String port;
    if (authority.startsWith("[")) {
      int close = authority.indexOf(']');
      if (close < 0) {
        return Optional.of("bad host '" + authority + "'");
      }
      host = authority.substring(0, close + 1);
      String rest = authority.substring(close + 1);
      port = rest.startsWith(":") ? rest.substring(1) : rest.isEmpty() ? null : rest;
    } else {
      int colon = authority.lastIndexOf(':');
      host = colon < 0 ? authority : authority.substring(0, colon);
      port = colon < 0 ? null : authority.substring(colon + 1);
    }
    if (host.isEmpty()) {
      return Optional.of("no host");
    }
    if (port == null || port.isEmpty()) {
      return Optional.of("no port");
    }
    if (!port.matches("[0-9]{1,9}")) {
      return Optional.of("bad port '" + port + "'");
    }
    int n = Integer.parseInt(port);
    if (n < 1 || n > 65535) {
      return Optional.of("bad port '" + port + "' (1 to 65535)");
    }
    return Optional.empty();
  }

  private static IllegalArgumentException badEndpoint(String endpoint, String why) {
    return new IllegalArgumentException(
        "bad etcd endpoint '" + endpoint + "': " + why + " (expected http(s)://host:port)");
  }

  @Override
  public String toString() {
    return "EtcdSettings[" + describeEndpoints() + (user == null ? "" : ", user " + user) + "]";
  }
}
