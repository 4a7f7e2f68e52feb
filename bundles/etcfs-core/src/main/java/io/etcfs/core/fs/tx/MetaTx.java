package io.etcfs.core.fs.tx;

import io.etcfs.core.fs.cache.KvSource;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongConsumer;

/**
 * One attempt of an optimistic metadata transaction (as in JuiceFS's meta engine): every key read
 * with {@link #get} is compared at commit against the mod revision it had when read, so the
 * change applies only to the state it was computed from. Writes are collected by key (a later
 * write of a key replaces an earlier one) and applied together with the guards.
 */
public final class MetaTx {
  private final KvSource source;
  private final Map<String, Compare> reads = new LinkedHashMap<>();
  private final List<Compare> guards = new ArrayList<>();
  private final Map<String, Op> writes = new LinkedHashMap<>();
  private final List<byte[]> deletedPrefixes = new ArrayList<>();
  private final List<LongConsumer> afterCommit = new ArrayList<>();

  MetaTx(KvSource source) {
    this.source = source;
  }

  /** Reads a key; the commit fails (and the body runs again) if it changed meanwhile. */
  public Optional<KeyValue> get(byte[] key) {
    Optional<KeyValue> kv = source.get(key);
    reads.putIfAbsent(str(key), Compare.modRevision(key, kv.map(KeyValue::modRevision).orElse(0L)));
    return kv;
  }

  /** Reads a key without guarding it (the caller adds a weaker guard of its own, or none). */
  public Optional<KeyValue> peek(byte[] key) {
    return source.get(key);
  }

  public RangeResult range(byte[] from, byte[] to, int limit) {
    return source.range(from, to, limit);
  }

  public void guard(Compare compare) {
    guards.add(compare);
  }

  public void put(byte[] key, byte[] value) {
    writes.put(str(key), Op.put(key, value));
  }

  public void delete(byte[] key) {
    writes.put(str(key), Op.delete(key));
  }

  /** Deletes every key under {@code prefix}; the body must put nothing under it. */
  public void deletePrefix(byte[] prefix) {
    writes.put(str(prefix) + "*", Op.deletePrefix(prefix));
    deletedPrefixes.add(prefix);
  }

  /** Adds operations produced elsewhere (the allocator's {@code commitOps}). */
  public void ops(List<Op> ops) {
    for (Op op : ops) {
      if (op instanceof Op.Range) {
        throw new IllegalArgumentException("a read among another part's writes: " + op);
      }
      byte[] key = op instanceof Op.Put p ? p.key() : ((Op.Delete) op).key();
      writes.put("ext:" + str(key), op);
    }
  }

  /** Runs after a successful commit, once (allocator bookkeeping, local state). */
  public void afterCommit(Runnable action) {
    afterCommit.add(revision -> action.run());
  }

  /** Runs after a successful commit, once, with the commit's revision (its keys' mod revision). */
  public void afterCommitAt(LongConsumer action) {
    afterCommit.add(action);
  }

  public boolean hasWrites() {
    return !writes.isEmpty();
  }

  /** The keys read with {@link #get}, for guard sources that protect them further. */
  public List<String> readKeys() {
    return List.copyOf(reads.keySet());
  }

  Txn toTxn(List<Compare> extra) {
    return together(List.of(this), extra);
  }

  /**
   * One transaction of several attempts whose writes touch no common key ({@link #disjoint}):
   * every compare of each (so it applies only if each would have applied alone) and every write.
   */
  static Txn together(List<MetaTx> parts, List<Compare> extra) {
    Txn txn = new Txn();
    for (MetaTx part : parts) {
      part.reads.values().forEach(txn::when);
      part.guards.forEach(txn::when);
    }
    extra.forEach(txn::when);
    for (MetaTx part : parts) {
      part.writes.values().forEach(txn::then);
    }
    return txn;
  }

  /**
   * Whether this attempt can share a transaction with {@code others}: none of them writes a key
   * it writes (a later write of a key would replace an earlier one), and none deletes a prefix.
   */
  boolean disjoint(List<MetaTx> others) {
    if (!deletedPrefixes.isEmpty()) {
      return false;
    }
    for (MetaTx other : others) {
      if (!other.deletedPrefixes.isEmpty()
          || !java.util.Collections.disjoint(writes.keySet(), other.writes.keySet())) {
        return false;
      }
    }
    return true;
  }

  /** Compares and writes this attempt puts into a transaction. */
  public int size() {
    return reads.size() + guards.size() + writes.size();
  }

  /** Every key the commit wrote: the cache forgets them so this node reads its own writes. */
  List<byte[]> writtenKeys() {
    List<byte[]> keys = new ArrayList<>();
    for (Op op : writes.values()) {
      keys.add(op instanceof Op.Put p ? p.key() : ((Op.Delete) op).key());
    }
    return keys;
  }

  List<byte[]> deletedPrefixes() {
    return deletedPrefixes;
  }

  List<LongConsumer> afterCommitActions() {
    return afterCommit;
  }

  static String str(byte[] key) {
    return new String(key, StandardCharsets.UTF_8);
  }

  static byte[] bytes(String key) {
    return Keys.of(key);
  }
}
