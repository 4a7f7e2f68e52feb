package io.etcfs.fencing.internal;

import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.support.shell.Table;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Properties;

/** The shell's {@code fenced}: one row per recovery record under {@code fences/}. */
final class FenceRows {
  private FenceRows() {}

  static Table read(MetaStore store, FencingKeys keys) {
    Table t = new Table().id("NODE").number("GEN").id("BY").id("WHEN").text("RESULT")
        .number("SECONDS");
    for (KeyValue kv : store.prefix(keys.fences(), 0).kvs()) {
      Properties r = MemberRows.parse(kv.valueString());
      t.row(r.getProperty("node", "?"), number(r.getProperty("generation")),
          r.getProperty("recoveredBy", "?"), when(r.getProperty("started")),
          r.getProperty("result", "in progress"), decimal(r.getProperty("seconds")));
    }
    return t;
  }

  private static String when(String instant) {
    try {
      return instant == null ? null : Instant.parse(instant).truncatedTo(ChronoUnit.SECONDS)
          .toString();
    } catch (DateTimeParseException e) {
      return instant;
    }
  }

  private static Long number(String s) {
    try {
      return s == null ? null : Long.valueOf(s.trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static Double decimal(String s) {
    try {
      return s == null ? null : Double.valueOf(s.replace(" s", "").replace(',', '.').trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
