package io.etcfs.etcd.client;

import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcfs.spi.meta.MetaStoreException;
import io.etcfs.spi.meta.MetaStoreException.Kind;
import io.grpc.Status;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.security.GeneralSecurityException;
import java.util.Locale;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * Turns jetcd, gRPC and Netty failures into {@link MetaStoreException}s with one-line messages
 * that name the endpoints, because these messages end up in front of an operator who has to act
 * on them ("which etcd, and what is wrong with it").
 */
final class EtcdErrors {
  private final String where;
  private final String user;
  private final long timeoutMillis;

  EtcdErrors(EtcdSettings settings) {
    this.where = "etcd at " + settings.describeEndpoints();
    this.user = settings.user();
    this.timeoutMillis = settings.requestTimeout().toMillis();
  }

  String where() {
    return where;
  }

  MetaStoreException timeout() {
    return new MetaStoreException(
        Kind.UNAVAILABLE, where + " did not answer within " + timeoutMillis + " ms");
  }

  MetaStoreException map(Throwable failure) {
    Throwable t = unwrap(failure);
    if (t instanceof TimeoutException) {
      return timeout();
    }
    if (t instanceof CompactedException c) {
      return error(Kind.COMPACTED, "compacted the history up to revision "
          + c.getCompactedRevision() + " that this watch needed", t);
    }
    String text = describe(t).toLowerCase(Locale.ROOT);
    Throwable root = rootCause(t);
    if (causedBy(t, SSLException.class) || causedBy(t, GeneralSecurityException.class)) {
      return error(Kind.UNAUTHENTICATED, "failed the TLS handshake: " + oneLine(root), t);
    }
    if (text.contains("authentication failed") || text.contains("invalid user id or password")) {
      return error(Kind.UNAUTHENTICATED, "refused the credentials for user '" + user + "'", t);
    }
    if (text.contains("user name is empty")) {
      return error(Kind.UNAUTHENTICATED, "requires a user and password (etcd auth is on)", t);
    }
    if (text.contains("lease not found")) {
      return error(Kind.LEASE_NOT_FOUND, "does not know the lease (expired or revoked)", t);
    }
    if (text.contains("compacted")) {
      return error(Kind.COMPACTED, "has compacted the requested revision", t);
    }
    if (text.contains("too large") || text.contains("too many operations")
        || text.contains("larger than max")) {
      return error(Kind.TOO_LARGE, "rejected the request as too large: " + oneLine(t), t);
    }
    return byStatus(t, root);
  }

  private MetaStoreException byStatus(Throwable t, Throwable root) {
    Status.Code code = codeOf(t);
    if (root instanceof ConnectException || root instanceof NoRouteToHostException
        || root instanceof UnknownHostException || root instanceof UnresolvedAddressException) {
      return error(Kind.UNAVAILABLE, "is not reachable: " + reachability(root), t);
    }
    switch (code) {
      case UNAVAILABLE, DEADLINE_EXCEEDED:
        return error(Kind.UNAVAILABLE, "is not reachable: " + oneLine(t), t);
      case UNAUTHENTICATED, PERMISSION_DENIED:
        return error(Kind.UNAUTHENTICATED, "refused access: " + oneLine(t), t);
      case RESOURCE_EXHAUSTED:
        return error(Kind.TOO_LARGE, "rejected the request as too large: " + oneLine(t), t);
      default:
        return error(Kind.OTHER, "failed: " + oneLine(t), t);
    }
  }

  private MetaStoreException error(Kind kind, String what, Throwable cause) {
    return new MetaStoreException(kind, where + " " + what, cause);
  }

  private static Status.Code codeOf(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      Status status = Status.fromThrowable(c);
      if (status.getCode() != Status.Code.UNKNOWN) {
        return status.getCode();
      }
      if (c instanceof EtcdException e) {
        return Status.Code.valueOf(e.getErrorCode().name());
      }
    }
    return Status.Code.UNKNOWN;
  }

  private static String reachability(Throwable root) {
    if (root instanceof ConnectException) {
      String message = root.getMessage() == null ? "" : root.getMessage().toLowerCase(Locale.ROOT);
      return message.contains("refused") ? "connection refused" : oneLine(root);
    }
    if (root instanceof UnknownHostException || root instanceof UnresolvedAddressException) {
      return "unknown host";
    }
    return oneLine(root);
  }

  static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof CompletionException || c instanceof ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }

  private static Throwable rootCause(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
  }

  private static String describe(Throwable t) {
    StringBuilder text = new StringBuilder();
    for (Throwable c = t; c != null && text.length() < 4096; c = c.getCause()) {
      text.append(c.getMessage()).append(' ');
      if (c.getCause() == c) {
        break;
      }
    }
    return text.toString();
  }

  /** The last, most specific message of a chain, on one line, without gRPC's prefixes. */
  static String oneLine(Throwable t) {
    String message = null;
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c.getMessage() != null && !c.getMessage().isBlank()) {
        message = c.getMessage();
      }
    }
    if (message == null) {
      message = t.getClass().getSimpleName();
    }
    String flat = message.replaceAll("\\s+", " ").strip();
    flat = flat.replaceFirst("^io\\.grpc\\.StatusRuntimeException: ", "");
    flat = flat.replaceFirst("^[A-Z_]+: ", "");
    return flat.length() > 300 ? flat.substring(0, 300) + "..." : flat;
  }
}
