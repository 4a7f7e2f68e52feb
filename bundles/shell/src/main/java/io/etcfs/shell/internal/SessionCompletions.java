package io.etcfs.shell.internal;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.CommandSessionListener;
import org.jline.builtins.Completers.CompletionData;

/**
 * Gives gogo.jline's own shell ({@code etcfs mount --foreground}) the completions of the etcfs
 * commands. gogo.jline completes a command's words from the session variable {@code
 * .completions} (what its {@code complete} builtin fills); before the first command line a
 * session runs (its profile), this listener replaces that map with one that also answers for
 * every etcfs command with a completion entry, as registered at the moment of the Tab, by
 * calling {@code etcfs:_complete}.
 */
final class SessionCompletions implements CommandSessionListener {
  static final String COMPLETIONS = ".completions";

  private final Registry registry;

  SessionCompletions(Registry registry) {
    this.registry = registry;
  }

  @Override
  public void beforeExecute(CommandSession session, CharSequence command) {
    // Only an interactive gogo.jline session has the map; sessions of 'etcfs shell' have none.
    if (session.get(COMPLETIONS) instanceof Map<?, ?> map && !(map instanceof Live)) {
      @SuppressWarnings("unchecked")
      Map<String, List<CompletionData>> existing = (Map<String, List<CompletionData>>) map;
      session.put(COMPLETIONS, new Live(existing, registry));
    }
  }

  @Override
  public void afterExecute(CommandSession session, CharSequence command, Exception exception) {}

  @Override
  public void afterExecute(CommandSession session, CharSequence command, Object result) {}

  /** The session's completions, plus the etcfs commands' looked up when asked for. */
  static final class Live extends HashMap<String, List<CompletionData>> {
    private static final long serialVersionUID = 1L;
    private final transient Registry registry;

    Live(Map<String, List<CompletionData>> existing, Registry registry) {
      super(existing);
      this.registry = registry;
    }

    @Override
    public List<CompletionData> get(Object key) {
      List<CompletionData> own = super.get(key);
      if (own != null || !(key instanceof String name) || !name.startsWith("etcfs:")) {
        return own;
      }
      CommandSpec spec = registry.specs().get(name.substring("etcfs:".length()));
      return spec == null ? null
          : List.of(new CompletionData(spec.options(), null, "etcfs:_complete", null));
    }
  }
}
