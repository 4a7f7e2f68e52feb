package io.etcfs.core.fs;

import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.RangeResult;
import io.etcfs.spi.meta.Txn;
import io.etcfs.spi.vfs.FsException;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * The filesystem's share of recovering a dead node (called by the elected recoverer once the node
 * is fenced): purges the inodes it had unlinked while it held them open — only the node that
 * unlinked an open file keeps it, so an orphan names that node's incarnation — and drops fcntl
 * and flock tables left empty (their version keys have no lease; the dead node's lock keys went
 * with its POSIX-lock lease).
 */
final class DeadNodeSweep {
  private static final Logger LOG = Logger.getLogger(DeadNodeSweep.class.getName());
  private static final int PAGE = 1000;

  private final Ctx ctx;
  private final Purger purger;

  DeadNodeSweep(Ctx ctx, Purger purger) {
    this.ctx = ctx;
    this.purger = purger;
  }

  /** The value of {@code orphans/<ino>}: whose incarnation holds the inode open. */
  static byte[] orphanRecord(Membership m, long now) {
    return ("node=" + m.nodeName() + "\ngeneration=" + m.generation() + "\nunlinked=" + now + "\n")
        .getBytes(StandardCharsets.UTF_8);
  }

  String recover(DeadNode dead) throws FsException {
    int purged = 0;
    for (KeyValue kv : all(ctx.keys.orphans())) {
      if (heldBy(kv, dead)) {
        long ino = Long.parseUnsignedLong(last(kv.keyString()), 16);
        purger.purge(ino);
        purged++;
      }
    }
    int tables = dropEmpty("plocks") + dropEmpty("flocks");
    LOG.info("recovery of " + dead.node() + " generation " + dead.generation() + ": purged "
        + purged + " orphan inode(s), dropped " + tables + " empty lock table(s)");
    return "orphans purged " + purged + ", empty lock tables dropped " + tables;
  }

  private static boolean heldBy(KeyValue orphan, DeadNode dead) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(orphan.valueString()));
    } catch (IOException | IllegalArgumentException e) {
      return false;
    }
    return dead.node().equals(p.getProperty("node"))
        && Long.toString(dead.generation()).equals(p.getProperty("generation"));
  }

  /**
   * Deletes version keys ({@code <kind>/<ino>}) with no owner key under them, each only if it is
   * unchanged since the read: a change to a table rewrites its version key.
   */
  private int dropEmpty(String kind) {
    byte[] prefix = ctx.keys.lockTables(kind);
    List<KeyValue> keys = all(prefix);
    int dropped = 0;
    for (int i = 0; i < keys.size(); i++) {
      KeyValue version = keys.get(i);
      String name = version.keyString();
      boolean isVersion = name.indexOf('/', new String(prefix, StandardCharsets.UTF_8).length()) < 0;
      boolean hasOwners = i + 1 < keys.size() && keys.get(i + 1).keyString().startsWith(name + "/");
      if (isVersion && !hasOwners && ctx.store.commit(new Txn()
          .when(Compare.modRevision(version.key(), version.modRevision()))
          .then(Op.delete(version.key()))).succeeded()) {
        dropped++;
      }
    }
    return dropped;
  }

  private List<KeyValue> all(byte[] prefix) {
    List<KeyValue> out = new ArrayList<>();
    page(prefix, out::add);
    return out;
  }

  private void page(byte[] prefix, Consumer<KeyValue> sink) {
    byte[] from = prefix;
    byte[] end = Keys.prefixEnd(prefix);
    while (true) {
      RangeResult r = ctx.store.range(from, end, PAGE);
      r.kvs().forEach(sink);
      if (!r.more() || r.kvs().isEmpty()) {
        return;
      }
      from = Keys.after(r.kvs().get(r.kvs().size() - 1).key());
    }
  }

  private static String last(String key) {
    return key.substring(key.lastIndexOf('/') + 1);
  }
}
