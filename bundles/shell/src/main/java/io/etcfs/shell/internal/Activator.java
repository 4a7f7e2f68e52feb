package io.etcfs.shell.internal;

import java.util.Hashtable;
import org.apache.felix.service.command.CommandSessionListener;
import org.osgi.annotation.bundle.Header;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceRegistration;

/**
 * The shell bundle: tab completion of the etcfs commands' words, for {@code etcfs shell} and for
 * the node's own Gogo shell. Each bundle registers its own commands and says how their words
 * complete ({@link io.etcfs.spi.shell.Completion}); this bundle joins those entries with the
 * completion sources.
 *
 * <p>A bundle activator rather than a component: the session listener must be registered before
 * gogo.jline's shell runs its first command line, which happens while the framework starts, before
 * Declarative Services is running. The launcher starts this bundle first.
 */
@Header(name = Constants.BUNDLE_ACTIVATOR, value = "${@class}")
public final class Activator implements BundleActivator {
  private Registry registry;
  private ServiceRegistration<?> listener;
  private ServiceRegistration<?> command;

  @Override
  public void start(BundleContext ctx) {
    registry = new Registry(ctx);
    listener = ctx.registerService(CommandSessionListener.class,
        new SessionCompletions(registry), null);
    Hashtable<String, Object> props = new Hashtable<>();
    props.put("osgi.command.scope", "etcfs");
    props.put("osgi.command.function", new String[] {"_complete", "_candidates"});
    command = ctx.registerService(CompleteCommand.class, new CompleteCommand(registry), props);
  }

  @Override
  public void stop(BundleContext ctx) {
    command.unregister();
    listener.unregister();
    registry.close();
  }
}
