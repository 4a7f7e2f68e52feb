package io.etcfs.testing;

import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fs.Keyspace;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A node's membership without fencing's machinery: its member key written without a lease (its
 * create revision is the generation); {@link #leave()} deletes it, as a lapsed lease would, and
 * the node counts as fenced from then on.
 */
public final class TestMembership implements Membership {
  private final MetaStore store;
  private final String node;
  private final byte[] key;
  private final long generation;
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  public TestMembership(MetaStore store, String fs, String node) {
    this.store = store;
    this.node = node;
    this.key = Keyspace.of(fs).bytes(Keyspace.MEMBERS + node);
    store.commit(new Txn().when(Compare.absent(key))
        .then(Op.put(key, "test".getBytes(StandardCharsets.UTF_8))));
    this.generation = store.get(key).orElseThrow().createRevision();
  }

  /** The member key goes, as when its lease lapses: the node is fenced. */
  public void leave() {
    store.commit(new Txn().then(Op.delete(key)));
    done.complete(null);
  }

  @Override
  public String nodeName() {
    return node;
  }

  @Override
  public byte[] memberKey() {
    return key.clone();
  }

  @Override
  public long generation() {
    return generation;
  }

  @Override
  public boolean isFenced() {
    return done.isDone();
  }

  @Override
  public CompletionStage<Void> done() {
    return done.copy();
  }
}
