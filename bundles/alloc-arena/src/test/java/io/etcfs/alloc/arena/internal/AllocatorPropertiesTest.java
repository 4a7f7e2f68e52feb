package io.etcfs.alloc.arena.internal;

import static io.etcfs.alloc.arena.internal.TestFs.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.alloc.arena.internal.TestFs.Node;
import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.alloc.NoSpaceException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Timeout;

/**
 * Two nodes sharing one store run random allocate / commit / release / abandon / idle-release /
 * reserve / spend sequences, committing the way the core does; a node out of space asks the
 * other for arenas it can spare. The model is the set of blocks each inode references, the
 * extents each node holds reserved and the blocks each node was promised: an allocation that
 * spends a promise never fails. (jqwik does not honour JUnit's
 * {@code @Timeout}; every wait here is bounded by {@link TestFs#await}, and surefire's fork
 * timeout bounds the rest.)
 */
@Timeout(300)
class AllocatorPropertiesTest {
  private static final int INODES = 4;

  /** One step; its ints pick sizes and targets, interpreted modulo what exists. */
  record Action(int kind, int node, int a, int b) {}

  @Provide
  Arbitrary<List<Action>> actions() {
    return Combinators.combine(Arbitraries.integers().between(0, 8),
            Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 999),
            Arbitraries.integers().between(0, 999))
        .as(Action::new).list().ofMinSize(1).ofMaxSize(60);
  }

  @Property(tries = 100)
  void noBlockIsHandedOutTwiceAndEveryViewAgrees(@ForAll("actions") List<Action> actions)
      throws Exception {
    try (TestFs fs = new TestFs(3, 16)) {
      fs.askWaitMillis = 20;
      Model model = new Model(List.of(fs.node("a"), fs.node("b")));
      for (Action action : actions) {
        model.step(action);
      }
      for (int i = 0; i < 2; i++) {
        Node n = model.nodes.get(i);
        long expected = fs.total() - model.referenced() - model.reservedBy(i)
            - model.promised[i];
        await(() -> n.alloc.freeBlocks() == expected, "node " + i + " counts " + expected
            + " free (has " + n.alloc.freeBlocks() + ")");
      }
      assertEquals(model.byInode(), byInode(fs.reverseMap()));
      Node again = fs.restart(model.nodes.get(0));
      Node first = model.nodes.get(0);
      // The first node's view is fed by its watch; equal free counts do not mean it has every
      // split and trim yet.
      await(() -> first.alloc.ownedView().equals(again.alloc.ownedView()), "node 0's view is"
          + " current");
      assertEquals(first.alloc.ownedView(), again.alloc.ownedView());
      assertEquals(fs.total() - model.referenced(), again.alloc.freeBlocks());
      model.nodes.forEach(n -> n.alloc.deactivate());
      again.alloc.deactivate();
    }
  }

  /** The reverse map as inode → blocks, failing if any block is recorded twice. */
  private static Map<Long, TreeSet<Long>> byInode(Map<Integer, Map<Long, Ref>> reverse) {
    Map<Long, TreeSet<Long>> out = new TreeMap<>();
    TreeSet<Long> seen = new TreeSet<>();
    reverse.values().forEach(arena -> arena.forEach((start, ref) -> {
      for (long b = start; b < start + ref.length(); b++) {
        assertTrue(seen.add(b), "block " + b + " recorded twice");
        out.computeIfAbsent(ref.ino(), x -> new TreeSet<>()).add(b);
      }
    }));
    return out;
  }

  /** What the filesystem should look like, and the checks made at every allocation. */
  private static final class Model {
    final List<Node> nodes;
    final Map<Long, TreeSet<Long>> files = new TreeMap<>();
    final List<List<Extent>> reserved = List.of(new ArrayList<>(), new ArrayList<>());
    final long[] lastEnd = {-1, -1};
    final long[] promised = {0, 0};

    Model(List<Node> nodes) {
      this.nodes = nodes;
    }

    void step(Action act) throws Exception {
      switch (act.kind()) {
        case 0, 1 -> allocate(act);
        case 2, 3 -> commit(act);
        case 4 -> release(act);
        case 5 -> abandon(act.node());
        case 6 -> nodes.get(act.node()).alloc.releaseIdleArenas(0);
        case 7 -> promise(act);
        default -> spend(act);
      }
    }

    private void allocate(Action act) {
      long goal = act.b() % 2 == 0 ? -1 : lastEnd[act.node()];
      try {
        List<Extent> got = nodes.get(act.node()).allocate(1 + act.a() % 12, goal);
        for (Extent e : got) {
          for (long b = e.start(); b < e.end(); b++) {
            assertTrue(!inUse(b), "block " + b + " handed out while in use");
          }
          reserved.get(act.node()).add(e);
          lastEnd[act.node()] = e.end();
        }
      } catch (NoSpaceException e) {
        // allowed: the device is small and split between two nodes
      }
    }

    private void promise(Action act) {
      int node = act.node();
      long blocks = 1 + act.a() % 12;
      if (act.b() % 3 == 0) {
        blocks = Math.min(blocks, promised[node]);
        nodes.get(node).alloc.unreserve(blocks);
        promised[node] -= blocks;
        return;
      }
      try {
        nodes.get(node).alloc.reserve(blocks);
        promised[node] += blocks;
      } catch (NoSpaceException e) {
        // allowed: nothing promised
      }
    }

    /** Allocates blocks that were promised: this must never fail for lack of space. */
    private void spend(Action act) throws NoSpaceException {
      int node = act.node();
      if (promised[node] == 0) {
        return;
      }
      long blocks = 1 + act.a() % promised[node];
      List<Extent> got = nodes.get(node).alloc.allocate(blocks, -1, blocks);
      promised[node] -= blocks;
      for (Extent e : got) {
        for (long b = e.start(); b < e.end(); b++) {
          assertTrue(!inUse(b), "promised block " + b + " handed out while in use");
        }
        reserved.get(node).add(e);
      }
    }

    private void commit(Action act) {
      List<Extent> mine = reserved.get(act.node());
      if (mine.isEmpty()) {
        return;
      }
      Extent e = mine.remove(0);
      long ino = 1 + act.a() % INODES;
      long len = 1 + act.b() % e.length();
      Extent used = new Extent(e.start(), len);
      List<Extent> released = act.b() % 3 == 0 ? pick(ino, act.a() / 7, act.b() / 11) : List.of();
      Node n = nodes.get(act.node());
      if (len < e.length()) {
        n.alloc.abandon(List.of(new Extent(e.start() + len, e.length() - len)));
      }
      assertTrue(n.commit(ino, List.of(used), released));
      apply(ino, List.of(used), released);
    }

    private void release(Action act) {
      long ino = 1 + act.a() % INODES;
      List<Extent> released = pick(ino, act.a() / 7, act.b());
      if (!released.isEmpty()) {
        assertTrue(nodes.get(act.node()).commit(ino, List.of(), released));
        apply(ino, List.of(), released);
      }
    }

    private void abandon(int node) {
      if (!reserved.get(node).isEmpty()) {
        nodes.get(node).alloc.abandon(List.of(reserved.get(node).remove(0)));
      }
    }

    /** A contiguous run of the inode's blocks, from a pseudo-random one, up to 8 long. */
    private List<Extent> pick(long ino, int where, int howLong) {
      TreeSet<Long> blocks = files.getOrDefault(ino, new TreeSet<>());
      if (blocks.isEmpty()) {
        return List.of();
      }
      long start = new ArrayList<>(blocks).get(where % blocks.size());
      long end = start + 1;
      while (end - start < 1 + howLong % 8 && blocks.contains(end)) {
        end++;
      }
      return List.of(new Extent(start, end - start));
    }

    private void apply(long ino, List<Extent> referenced, List<Extent> released) {
      TreeSet<Long> blocks = files.computeIfAbsent(ino, x -> new TreeSet<>());
      released.forEach(e -> blocks.subSet(e.start(), e.end()).clear());
      referenced.forEach(e -> {
        for (long b = e.start(); b < e.end(); b++) {
          blocks.add(b);
        }
      });
      if (blocks.isEmpty()) {
        files.remove(ino);
      }
    }

    private boolean inUse(long block) {
      if (files.values().stream().anyMatch(s -> s.contains(block))) {
        return true;
      }
      return reserved.stream().flatMap(List::stream)
          .anyMatch(e -> block >= e.start() && block < e.end());
    }

    long referenced() {
      return files.values().stream().mapToLong(TreeSet::size).sum();
    }

    long reservedBy(int node) {
      return reserved.get(node).stream().mapToLong(Extent::length).sum();
    }

    Map<Long, TreeSet<Long>> byInode() {
      return files;
    }
  }
}
