package io.etcfs.shell.internal;

import io.etcfs.spi.shell.Completion;
import io.etcfs.spi.shell.CompletionSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;
import org.osgi.framework.BundleContext;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.util.tracker.ServiceTracker;

/**
 * The completion entries of the commands registered right now, and the completion sources: two
 * service trackers, read afresh on every Tab, so a plug-in's completions come and go with it.
 */
final class Registry implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(Registry.class.getName());

  private final ServiceTracker<Object, Object> commands;
  private final ServiceTracker<CompletionSource, CompletionSource> sources;

  Registry(BundleContext ctx) {
    try {
      this.commands = new ServiceTracker<>(ctx,
          FrameworkUtil.createFilter("(" + Completion.PROPERTY + "=*)"), null);
    } catch (InvalidSyntaxException e) {
      throw new IllegalStateException(e);
    }
    this.sources = new ServiceTracker<>(ctx, CompletionSource.class, null);
    commands.open();
    sources.open();
  }

  /** The completer over what is registered now. */
  Completer completer() {
    return new Completer(specs(), this::sources);
  }

  /** Every registered command's entries, by function name; a malformed entry is skipped. */
  Map<String, CommandSpec> specs() {
    Map<String, CommandSpec> specs = new HashMap<>();
    ServiceReference<Object>[] refs = commands.getServiceReferences();
    for (ServiceReference<Object> ref : refs == null ? List.<ServiceReference<Object>>of()
        : List.of(refs)) {
      for (String entry : strings(ref.getProperty(Completion.PROPERTY))) {
        try {
          CommandSpec spec = CommandSpec.parse(entry);
          specs.put(spec.function(), spec);
        } catch (IllegalArgumentException e) {
          LOG.warning("ignoring the completion entry '" + entry + "' of service "
              + ref.getProperty("service.id") + ": " + e.getMessage());
        }
      }
    }
    return specs;
  }

  List<CompletionSource> sources(String kind) {
    List<CompletionSource> out = new ArrayList<>();
    sources.getTracked().forEach((ref, source) -> {
      if (kind.equals(ref.getProperty(CompletionSource.KIND))) {
        out.add(source);
      }
    });
    return out;
  }

  private static List<String> strings(Object property) {
    if (property instanceof String s) {
      return List.of(s);
    }
    if (property instanceof String[] a) {
      return List.of(a);
    }
    if (property instanceof java.util.Collection<?> c) {
      return c.stream().map(String::valueOf).toList();
    }
    return List.of();
  }

  @Override
  public void close() {
    sources.close();
    commands.close();
  }
}
