package io.etcfs.core.check;

import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import java.util.List;

/**
 * Every key of one filesystem as of one store revision: what the check reads. Consistent because
 * every change etcfs makes is one transaction, so no revision shows half of one.
 *
 * @param fsName the filesystem's name
 * @param revision the store revision every key was read at
 * @param kvs the keys under {@code /etcfs/<fsName>/}, in key order
 */
public record FsSnapshot(String fsName, long revision, List<KeyValue> kvs) {
  public FsSnapshot {
    kvs = List.copyOf(kvs);
  }

  /**
   * Reads a snapshot with one unlimited range read, which a store answers at one revision. For
   * stores where one read may hold everything (the in-memory store, small filesystems); the CLI
   * pages its reads at a pinned revision instead.
   */
  public static FsSnapshot read(MetaStore store, String fsName) {
    byte[] prefix = Keys.of(Keyspace.of(fsName).root());
    RangeResult r = store.prefix(prefix, 0);
    return new FsSnapshot(fsName, r.revision(), r.kvs());
  }
}
