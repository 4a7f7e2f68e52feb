package io.etcfs.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.etcfs.spi.meta.MetaStoreException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.osgi.framework.BundleException;

/** Start failures reach the user as their reason, never as the wrapper they came in. */
@Timeout(10)
class FailuresTest {

  @Test
  void aReflectiveWrapperGivesWayToItsCause() {
    assertEquals("cannot mount etcfs at /m: already mounted", Failures.describe(
        new InvocationTargetException(new IllegalStateException(
            "cannot mount etcfs at /m: already mounted"))));
    assertEquals("etcd at http://h:1 is not reachable: connection refused", Failures.describe(
        new UndeclaredThrowableException(new InvocationTargetException(new MetaStoreException(
            MetaStoreException.Kind.UNAVAILABLE,
            "etcd at http://h:1 is not reachable: connection refused")))));
  }

  @Test
  void asynchronousWrappersGiveWayToTheirCause() throws Exception {
    CompletableFuture<Void> f = CompletableFuture.failedFuture(new IOException("disk gone"));
    ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
        ExecutionException.class, f::get);
    assertEquals("IOException: disk gone", Failures.describe(e));
    assertEquals("IOException: disk gone",
        Failures.describe(new CompletionException(new ExecutionException(
            new IOException("disk gone")))));
  }

  @Test
  void anExceptionThatOnlyRepeatsItsCauseGivesWayToo() {
    // new RuntimeException(cause) takes cause.toString() as its message.
    assertEquals("node name 'n1' is already a member", Failures.describe(new RuntimeException(
        new InvocationTargetException(new UserError("node name 'n1' is already a member")))));
  }

  @Test
  void anOwnMessageWinsOverItsCause() {
    assertEquals("reading the filesystem record: timed out", Failures.describe(
        new IllegalStateException("reading the filesystem record: timed out",
            new InvocationTargetException(new IOException("x")))));
  }

  @Test
  void aCauseWithoutMessageIsNamedByItsType() {
    assertEquals("NullPointerException",
        Failures.describe(new InvocationTargetException(new NullPointerException())));
    assertEquals("InvocationTargetException", Failures.describe(new InvocationTargetException(null)));
  }

  @Test
  void aBundleStartErrorSaysWhy() {
    assertEquals("Activator start error in bundle io.etcfs.shell [3]: no terminal",
        Failures.describe(new BundleException("Activator start error in bundle io.etcfs.shell [3].",
            new IllegalStateException("no terminal"))));
  }

  @Test
  void aStackTraceAsTextIsReadTheSameWay() {
    assertEquals("cannot join 'fs': etcd at http://h:1 timed out after 5000 ms", Failures.describeTrace(
        trace(new InvocationTargetException(new IllegalStateException(
            "cannot join 'fs': etcd at http://h:1 timed out after 5000 ms",
            new IOException("deadline"))))));
    assertEquals("IOException: /dev/fuse: Permission denied", Failures.describeTrace(trace(
        new InvocationTargetException(new RuntimeException(
            new IOException("/dev/fuse: Permission denied"))))));
    assertEquals("just this", Failures.describeTrace(
        trace(new IllegalArgumentException("just this"))));
    assertEquals("OutOfMemoryError: Java heap space",
        Failures.describeTrace(trace(new InvocationTargetException(
            new OutOfMemoryError("Java heap space")))));
    assertEquals("", Failures.describeTrace(null));
  }

  static String trace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }
}
