package io.etcfs.launcher.node;

import io.etcfs.launcher.Failures;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * Whether a node runtime is whole: every bundle ACTIVE (fragments RESOLVED; the bundles of a lock
 * backend the configuration does not select may rest unstarted) and every Declarative
 * Services component satisfied. Components are read from SCR's ServiceComponentRuntime DTOs,
 * reflectively, because the launcher does not share the bundles' class space (DTOs are public
 * fields, so reflection stays simple).
 */
public final class Health {
  private static final String SCR = "org.osgi.service.component.runtime.ServiceComponentRuntime";
  private static final int SATISFIED = 4;
  private static final int ACTIVE = 8;
  private static final int FAILED_ACTIVATION = 16;

  /**
   * One component configuration.
   *
   * @param name the component's name
   * @param bundle the symbolic name of its bundle
   * @param id the configuration's id (a new id means the component was reactivated)
   * @param state the DS state name, or {@code NOT_SELECTED} for a component whose configuration
   *     is given only when the user selects it ({@link NodeConfigs#selectedOnly})
   * @param problem why it is not satisfied, or empty
   * @param immediate whether SCR activates it as soon as it is satisfied (not on first use)
   */
  public record Component(String name, String bundle, long id, String state, String problem,
      boolean immediate) {
    /**
     * Whether it is where it should be. An immediate component that is only SATISFIED is still
     * being activated (its constructor runs: the FUSE front end's waits for the mount to appear),
     * and may yet fail: counting it as whole let a node report READY before its mount existed.
     * A delayed one rests in SATISFIED until someone uses its service.
     */
    public boolean ok() {
      return state.equals("ACTIVE") || (state.equals("SATISFIED") && !immediate)
          || state.equals(NOT_SELECTED);
    }
  }

  public static final String NOT_SELECTED = "NOT_SELECTED";

  /**
   * A runtime's health.
   *
   * @param problems one line per bundle not active or component not satisfied; empty when ready
   * @param components every component configuration
   */
  public record Report(List<String> problems, List<Component> components) {
    public boolean ready() {
      return problems.isEmpty();
    }

    /** True if some component failed to activate: waiting longer will not help. */
    public boolean failed() {
      return components.stream().anyMatch(c -> c.state().equals("FAILED_ACTIVATION"));
    }
  }

  private Health() {}

  public static Report check(BundleContext ctx) {
    List<String> problems = new ArrayList<>();
    for (Bundle b : ctx.getBundles()) {
      boolean fragment = b.getHeaders().get("Fragment-Host") != null;
      int expected = fragment ? Bundle.RESOLVED : Bundle.ACTIVE;
      if (b.getState() != expected && !standby(b)) {
        problems.add("bundle " + b.getSymbolicName() + " is " + bundleState(b.getState()));
      }
    }
    List<Component> components = components(ctx);
    for (Component c : components) {
      if (!c.ok()) {
        problems.add("component " + c.name() + " is " + c.state()
            + (c.problem().isEmpty() ? "" : ": " + c.problem()));
      }
    }
    if (components.isEmpty()) {
      problems.add("no Declarative Services components found (is SCR running?)");
    }
    return new Report(List.copyOf(problems), List.copyOf(components));
  }

  /**
   * A bundle of a lock backend the configuration does not select, left installed but not
   * started ({@link NodeRuntime#HAZELCAST}). Were its backend selected, the start would have
   * failed on it, or the core's lock reference would be unsatisfied.
   */
  private static boolean standby(Bundle b) {
    return NodeRuntime.HAZELCAST.contains(b.getSymbolicName())
        && (b.getState() == Bundle.INSTALLED || b.getState() == Bundle.RESOLVED);
  }

  static List<Component> components(BundleContext ctx) {
    ServiceReference<?> ref = Services.find(ctx, SCR);
    if (ref == null) {
      return List.of();
    }
    Object scr = ctx.getService(ref);
    try {
      Class<?> type = Class.forName(SCR, false, scr.getClass().getClassLoader());
      Method descriptions = type.getMethod("getComponentDescriptionDTOs", Bundle[].class);
      Class<?> descType = Class.forName(
          "org.osgi.service.component.runtime.dto.ComponentDescriptionDTO", false,
          scr.getClass().getClassLoader());
      Method configs = type.getMethod("getComponentConfigurationDTOs", descType);
      List<Component> out = new ArrayList<>();
      java.util.Set<String> optional =
          NodeConfigs.selectedOnly(ctx.getProperty(NodeRuntime.FRONTEND_PROPERTY));
      for (Object d : (Collection<?>) descriptions.invoke(scr, (Object) new Bundle[0])) {
        String name = (String) field(d, "name");
        String bundle = (String) field(field(d, "bundle"), "symbolicName");
        Collection<?> cs = (Collection<?>) configs.invoke(scr, d);
        String[] pids = (String[]) field(d, "configurationPid");
        boolean immediate = (Boolean) field(d, "immediate");
        if (cs.isEmpty() && optional.containsAll(List.of(pids))) {
          out.add(new Component(name, bundle, -1, NOT_SELECTED, "", immediate));
        } else if (cs.isEmpty()) {
          out.add(new Component(name, bundle, -1, "UNSATISFIED_CONFIGURATION",
              "no configuration for " + String.join(",", pids), immediate));
        }
        for (Object c : cs) {
          out.add(configuration(name, bundle, c, immediate));
        }
      }
      return out;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot read SCR component state: " + e, e);
    } finally {
      ctx.ungetService(ref);
    }
  }

  private static Component configuration(String name, String bundle, Object c,
      boolean immediate) throws ReflectiveOperationException {
    int state = (Integer) field(c, "state");
    long id = (Long) field(c, "id");
    String problem = "";
    if (state == FAILED_ACTIVATION) {
      problem = firstLine((String) field(c, "failure"));
    } else if (state == SATISFIED && immediate) {
      problem = "being activated";
    } else if (state != SATISFIED && state != ACTIVE) {
      Object unsatisfied = field(c, "unsatisfiedReferences");
      List<String> refs = new ArrayList<>();
      for (int i = 0; unsatisfied != null && i < Array.getLength(unsatisfied); i++) {
        Object u = Array.get(unsatisfied, i);
        refs.add(field(u, "name") + " " + field(u, "target"));
      }
      problem = refs.isEmpty() ? "" : "missing " + String.join(", ", refs);
    }
    return new Component(name, bundle, id, stateName(state), problem, immediate);
  }

  private static Object field(Object o, String name) throws ReflectiveOperationException {
    return o.getClass().getField(name).get(o);
  }

  /**
   * One line for SCR's failure text (a printed stack trace): the reason, not the
   * InvocationTargetException SCR's reflective constructor call wraps it in.
   */
  static String firstLine(String failure) {
    return Failures.describeTrace(failure);
  }

  private static String stateName(int state) {
    return switch (state) {
      case 1 -> "UNSATISFIED_CONFIGURATION";
      case 2 -> "UNSATISFIED_REFERENCE";
      case SATISFIED -> "SATISFIED";
      case ACTIVE -> "ACTIVE";
      case FAILED_ACTIVATION -> "FAILED_ACTIVATION";
      default -> "STATE_" + state;
    };
  }

  private static String bundleState(int state) {
    return switch (state) {
      case Bundle.INSTALLED -> "INSTALLED (not resolved)";
      case Bundle.RESOLVED -> "RESOLVED (not started)";
      case Bundle.STARTING -> "STARTING";
      case Bundle.STOPPING -> "STOPPING";
      case Bundle.ACTIVE -> "ACTIVE";
      default -> "UNINSTALLED";
    };
  }
}
