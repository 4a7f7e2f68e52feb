package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.Allocator;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.shell.Completion;
import io.etcfs.support.shell.Args;
import io.etcfs.support.shell.Table;
import java.io.IOException;
import java.io.StringReader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;

/**
 * The Gogo command {@code arenas}: every arena's owner and use, from this node's reverse-map
 * mirror and the claims in etcd. A component of its own beside {@link ArenaAllocator}, sharing
 * its configuration, so the command comes and goes with the allocator it reads.
 */
@Component(
    service = ArenaCommands.class,
    configurationPid = ArenaAllocator.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = {"osgi.command.scope=etcfs", "osgi.command.function=arenas",
        Completion.PROPERTY + "=arenas --json -h"})
public final class ArenaCommands {
  private static final String USAGE = "arenas [--json]";

  private final MetaStore store;
  private final ArenaAllocator allocator;
  private final ArenaKeys keys;

  @Activate
  public ArenaCommands(
      @Reference(name = "metaStore") MetaStore store,
      @Reference(name = "allocator",
          target = "(" + Allocator.BACKEND + "=" + ArenaAllocator.BACKEND_NAME + ")")
          Allocator allocator,
      ArenaAllocator.Config config) {
    this.store = store;
    if (!(allocator instanceof ArenaAllocator arenaAllocator)) {
      throw new IllegalStateException("arenas: the allocator registered as backend "
          + ArenaAllocator.BACKEND_NAME + " is " + allocator.getClass().getName());
    }
    this.allocator = arenaAllocator;
    this.keys = new ArenaKeys(config.fsName());
  }

  /** Every arena: owner, generation, used and free blocks, longest free run; then totals. */
  @Descriptor("every arena: owner, generation, used/free blocks, longest free run; totals")
  public String arenas(@Descriptor("[--json] [-h]") String... words) {
    Args a = Args.parse("arenas", USAGE, words, 0, 0, "--json");
    if (a.help()) {
      return a.usage() + "\nEvery arena: its owner (claim), blocks used and free, and the longest"
          + " free run\n(fragmentation), from this node's mirror of the reverse map.";
    }
    Map<Integer, Properties> claims = claims();
    List<ArenaTable.Usage> usage = allocator.usage();
    Table t = new Table().number("ARENA").id("OWNER").number("GEN").number("USED")
        .number("FREE").number("LONGEST_FREE").number("FRAG_PCT");
    long used = 0;
    long size = 0;
    for (ArenaTable.Usage u : usage) {
      Properties claim = claims.get(u.arena());
      long free = u.size() - u.used();
      t.row(u.arena(), claim == null ? null : claim.getProperty("node", "?"),
          claim == null ? null : generation(claim), u.used(), free, u.longestFree(),
          fragmentation(free, u.longestFree()));
      used += u.used();
      size += u.size();
    }
    if (a.has("--json")) {
      return t.json();
    }
    return t.render() + "\ntotal: " + usage.size() + " arenas, " + claims.size() + " claimed, "
        + "blocks of " + allocator.blockSize() + " B\n       " + used + " blocks used, "
        + (size - used) + " free of " + size
        + "\nFRAG_PCT: share of the free blocks outside the longest free run";
  }

  /** Percent of the free blocks not in the longest free run: 0 when free space is one run. */
  static Long fragmentation(long free, long longest) {
    return free <= 0 ? null : (free - Math.min(free, longest)) * 100 / free;
  }

  private Map<Integer, Properties> claims() {
    Map<Integer, Properties> out = new HashMap<>();
    for (KeyValue kv : store.prefix(keys.claimsPrefix(), 0).kvs()) {
      int arena = keys.claimArena(kv.key());
      if (arena >= 0) {
        Properties p = new Properties();
        try {
          p.load(new StringReader(kv.valueString()));
        } catch (IOException | IllegalArgumentException e) {
          // A damaged claim still shows as claimed, by an unknown owner.
        }
        out.put(arena, p);
      }
    }
    return out;
  }

  private static Long generation(Properties claim) {
    try {
      return Long.valueOf(claim.getProperty("generation", "").trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
