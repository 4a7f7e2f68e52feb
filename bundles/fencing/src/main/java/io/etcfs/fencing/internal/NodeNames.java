package io.etcfs.fencing.internal;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.shell.Candidate;
import io.etcfs.spi.shell.Completion;
import io.etcfs.spi.shell.CompletionSource;
import java.util.ArrayList;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;

/**
 * The cluster's member names for the shell's completion ({@code fence NODE}), each described by
 * its host: one range read of {@code members/} per Tab, since members come and go.
 */
@Component(
    configurationPid = NodeMembership.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = CompletionSource.KIND + "=" + Completion.NODE)
public final class NodeNames implements CompletionSource {
  private final MetaStore store;
  private final FencingKeys keys;
  private final String prefix;

  @Activate
  public NodeNames(@Reference(name = "metaStore") MetaStore store, NodeMembership.Config config) {
    this.store = store;
    this.keys = new FencingKeys(Names.check(NodeMembership.PID + ": fsName", config.fsName()));
    this.prefix = new String(keys.members(), java.nio.charset.StandardCharsets.UTF_8);
  }

  @Override
  public List<Candidate> complete(String word) {
    List<Candidate> out = new ArrayList<>();
    for (KeyValue kv : store.prefix(keys.members(), 0).kvs()) {
      String name = kv.keyString().substring(prefix.length());
      if (name.startsWith(word)) {
        out.add(new Candidate(name, MemberRows.parse(kv.valueString()).getProperty("host"),
            true));
      }
    }
    return out;
  }
}
