package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A member key written without a lease; {@link #leave()} deletes it, as a lapsed lease would. */
final class FakeMembership implements Membership {
  private final MetaStore store;
  private final String node;
  private final byte[] key;
  private final long generation;
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  FakeMembership(MetaStore store, String fs, String node) {
    this.store = store;
    this.node = node;
    this.key = Keys.of("/etcfs/" + fs + "/members/" + node);
    store.commit(new Txn().when(Compare.absent(key)).then(Op.put(key, Keys.of("test"))));
    this.generation = store.get(key).orElseThrow().createRevision();
  }

  void leave() {
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
