package io.etcfs.launcher.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The one line a failed component contributes to "node N failed to start: ...". */
@Timeout(10)
class HealthTest {

  /**
   * SCR constructs components reflectively and keeps the printed stack trace of what the
   * constructor threw: an InvocationTargetException, whose own first line says nothing.
   */
  @Test
  void aComponentThatThrewInItsConstructorIsReportedByTheCause() {
    StringWriter w = new StringWriter();
    new InvocationTargetException(new IllegalStateException(
        "node name 'node2' is already a member of 'etcfs'")).printStackTrace(new PrintWriter(w));
    assertEquals("node name 'node2' is already a member of 'etcfs'", Health.firstLine(w.toString()));
  }

  /**
   * An immediate component is activated as soon as it is satisfied; until its constructor has
   * returned (the FUSE front end's returns once the mount is there) the node is not whole.
   */
  @Test
  void anImmediateComponentIsWholeOnlyOnceActive() {
    assertFalse(new Health.Component("fuse", "b", 1, "SATISFIED", "being activated", true).ok());
    assertTrue(new Health.Component("fuse", "b", 1, "ACTIVE", "", true).ok());
    assertTrue(new Health.Component("locks", "b", 2, "SATISFIED", "", false).ok());
    assertFalse(new Health.Component("fuse", "b", 1, "FAILED_ACTIVATION", "x", true).ok());
  }

  @Test
  void aPlainFailureLosesOnlyItsTypeName() {
    assertEquals("cannot mount etcfs at /m: already mounted", Health.firstLine(
        "java.lang.IllegalStateException: cannot mount etcfs at /m: already mounted\n\tat x.y(Z)"));
    assertEquals("", Health.firstLine(null));
  }
}
