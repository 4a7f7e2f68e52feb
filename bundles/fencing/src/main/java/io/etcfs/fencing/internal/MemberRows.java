package io.etcfs.fencing.internal;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.support.shell.Table;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

/**
 * The rows of the shell's {@code members}: every member key, and every heartbeat slot whose
 * incarnation has no member key any more (dead, its recovery not finished). A member and its
 * slot were created in one transaction, so they share the create revision: the generation.
 */
final class MemberRows {
  static final String NOTE = "LEASE_S: seconds left of the membership lease (etcd); BEAT_S: "
      + "seconds since the\nlast device heartbeat, approx. (the writer's wall clock)";

  /** Reads one heartbeat slot; empty if it holds no beat. */
  interface Beats {
    Optional<Beat> read(int slot) throws IOException;
  }

  record Row(String name, long generation, Integer slot, String host, String mountpoint,
      Long leaseLeft, Double beatAge, String state) {}

  private MemberRows() {}

  static List<Row> read(MetaStore store, FencingKeys keys, Beats beats, long nowMillis) {
    Map<Long, Integer> slotOf = new HashMap<>();
    Map<Long, String> slotNode = new HashMap<>();
    for (KeyValue kv : store.prefix(keys.slots(), 0).kvs()) {
      slotOf.put(kv.createRevision(), FencingKeys.slotOf(kv.keyString()));
      slotNode.put(kv.createRevision(), parse(kv.valueString()).getProperty("node", "?"));
    }
    List<Row> rows = new ArrayList<>();
    for (KeyValue kv : store.prefix(keys.members(), 0).kvs()) {
      long gen = kv.createRevision();
      Properties record = parse(kv.valueString());
      Integer slot = slotOf.remove(gen);
      Optional<Beat> beat = beat(beats, slot, gen);
      String state = beat.map(b -> switch (b.state()) {
        case Beat.FENCED -> "fenced";
        case Beat.LEFT -> "leaving";
        default -> "live";
      }).orElse("live");
      rows.add(new Row(FencingKeys.last(kv.keyString()), gen, slot,
          record.getProperty("host", "?"), record.getProperty("mountpoint", "?"),
          kv.lease() == 0 ? null : leaseLeft(store, kv.lease()), age(beat, nowMillis), state));
    }
    slotOf.forEach((gen, slot) -> {
      Optional<Beat> beat = beat(beats, slot, gen);
      String state = beat.map(b -> switch (b.state()) {
        case Beat.FENCED -> "fenced, recovery pending";
        case Beat.LEFT -> "left";
        default -> "dead, recovery pending";
      }).orElse("dead, recovery pending");
      rows.add(new Row(slotNode.get(gen), gen, slot, null, null, null, age(beat, nowMillis),
          state));
    });
    return rows;
  }

  static Table table(List<Row> rows) {
    Table t = new Table().id("NAME").number("GEN").number("SLOT").text("HOST")
        .text("MOUNTPOINT").number("LEASE_S").number("BEAT_S").text("STATE");
    for (Row r : rows) {
      t.row(r.name(), r.generation(), r.slot(), r.host(), r.mountpoint(), r.leaseLeft(),
          r.beatAge(), r.state());
    }
    return t;
  }

  private static Long leaseLeft(MetaStore store, long lease) {
    long left = store.leaseTimeToLive(lease);
    return left < 0 ? null : left;
  }

  /** The slot's beat if it is this incarnation's; a beat of an earlier one tells nothing. */
  private static Optional<Beat> beat(Beats beats, Integer slot, long generation) {
    if (slot == null || slot < 0) {
      return Optional.empty();
    }
    try {
      return beats.read(slot).filter(b -> b.generation() == generation);
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static Double age(Optional<Beat> beat, long nowMillis) {
    return beat.map(b -> Math.max(0, nowMillis - b.wallMillis()) / 100 / 10.0).orElse(null);
  }

  static Properties parse(String text) {
    Properties record = new Properties();
    try {
      record.load(new StringReader(text));
    } catch (IOException | IllegalArgumentException e) {
      // A damaged record still gets its row: the key, revision and lease are what matter most.
      record.clear();
    }
    return record;
  }
}
