package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.meta.TxnResult;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Properties;

/**
 * Arena claims in etcd: {@code arenas/<arena>} = {@code node}, {@code generation} (Properties
 * text). A claim is not attached to a lease: it outlives its node on purpose, so that a dead
 * node's arenas stay out of everyone's reach until recovery has fenced it and takes them over
 * (issue #5: a claim-with-takeover compares the old claim's create revision). Every claim write
 * is guarded by this node's generation, so a fenced node can neither claim nor release.
 */
final class Claims {
  private final MetaStore store;
  private final ArenaKeys keys;
  private final Membership membership;

  Claims(MetaStore store, ArenaKeys keys, Membership membership) {
    this.store = store;
    this.keys = keys;
    this.membership = membership;
  }

  /** Every current claim by arena. */
  Map<Integer, KeyValue> read() {
    Map<Integer, KeyValue> claims = new HashMap<>();
    for (KeyValue kv : store.prefix(keys.claimsPrefix(), 0).kvs()) {
      int arena = keys.claimArena(kv.key());
      if (arena >= 0) {
        claims.put(arena, kv);
      }
    }
    return claims;
  }

  /** True if the claim is this incarnation's (same node name and generation). */
  boolean mine(KeyValue claim) {
    return ownedBy(claim, membership.nodeName(), membership.generation());
  }

  private static boolean ownedBy(KeyValue claim, String node, long generation) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(claim.valueString()));
    } catch (IOException | IllegalArgumentException e) {
      return false;
    }
    return node.equals(p.getProperty("node"))
        && Long.toString(generation).equals(p.getProperty("generation"));
  }

  /**
   * Recovery of a dead incarnation: deletes every claim it held, each only if unchanged since the
   * read, guarded by this (live) node's generation. The next node to claim such an arena rebuilds
   * it from the reverse map, so what the dead node committed stays referenced and what it had
   * only reserved is free again.
   *
   * @return the arenas released
   */
  java.util.List<Integer> releaseDead(String node, long generation) {
    java.util.List<Integer> released = new java.util.ArrayList<>();
    for (Map.Entry<Integer, KeyValue> e : new java.util.TreeMap<>(read()).entrySet()) {
      KeyValue kv = e.getValue();
      if (ownedBy(kv, node, generation) && store.commit(new Txn()
          .when(Compare.modRevision(kv.key(), kv.modRevision()))
          .when(generationGuard())
          .then(Op.delete(kv.key()))).succeeded()) {
        released.add(e.getKey());
      }
    }
    if (released.isEmpty()) {
      checkMember();
    }
    return released;
  }

  /**
   * Claims an unclaimed arena; returns the claim's create revision, or empty if another node got
   * there first.
   *
   * @throws IllegalStateException if this node is no longer a member (fenced)
   */
  OptionalLong claim(int arena) {
    String value = "node=" + membership.nodeName() + "\ngeneration=" + membership.generation()
        + "\nclaimed=" + Instant.now() + "\n";
    TxnResult r = store.commit(new Txn()
        .when(Compare.absent(keys.claim(arena)))
        .when(generationGuard())
        .then(Op.put(keys.claim(arena), value.getBytes(StandardCharsets.UTF_8))));
    if (r.succeeded()) {
      return OptionalLong.of(r.revision());
    }
    checkMember();
    return OptionalLong.empty();
  }

  /** Deletes this node's claim if it is still the one created at {@code claimRevision}. */
  boolean release(int arena, long claimRevision) {
    return store.commit(new Txn()
        .when(Compare.createRevision(keys.claim(arena), claimRevision))
        .when(generationGuard())
        .then(Op.delete(keys.claim(arena)))).succeeded();
  }

  /**
   * Asks the other nodes for space: puts this node's want key, guarded by its generation (a
   * fenced node asks nobody). The value changes with every ask, so every ask is an event.
   *
   * @return false if the ask was refused (this node is no longer a member)
   */
  boolean ask(long blocks) {
    String value = "node=" + membership.nodeName() + "\ngeneration=" + membership.generation()
        + "\nblocks=" + blocks + "\nasked=" + Instant.now() + "\n";
    byte[] key = keys.want(membership.nodeName());
    return store.commit(new Txn().when(generationGuard())
        .then(Op.put(key, value.getBytes(StandardCharsets.UTF_8)))).succeeded();
  }

  /** Deletes this node's want key: it has what it asked for, or gave up. */
  void withdraw() {
    store.commit(new Txn().when(generationGuard())
        .then(Op.delete(keys.want(membership.nodeName()))));
  }

  void checkMember() {
    long created = store.get(membership.memberKey()).map(KeyValue::createRevision).orElse(0L);
    if (membership.isFenced() || created != membership.generation()) {
      throw new IllegalStateException("node " + membership.nodeName() + " (generation "
          + membership.generation() + ") is no longer a member: it may not claim arenas");
    }
  }

  private Compare generationGuard() {
    return Compare.createRevision(membership.memberKey(), membership.generation());
  }
}
