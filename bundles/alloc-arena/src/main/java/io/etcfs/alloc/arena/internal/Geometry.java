package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.Extent;
import io.etcfs.spi.fs.FsRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the arenas lie on the device, in device blocks (counted from byte 0), from the
 * filesystem record.
 *
 * @param firstBlock the first block of arena 0 ({@code dataStart / blockSize})
 */
record Geometry(int blockSize, long firstBlock, long blocksPerArena, int arenas) {

  /** A part of an extent that lies in one arena. */
  record Piece(int arena, long start, long end) {
    long length() {
      return end - start;
    }

    Extent extent() {
      return new Extent(start, end - start);
    }
  }

  static Geometry decode(byte[] record) {
    return of(FsRecord.decode(record));
  }

  static Geometry of(FsRecord r) {
    if (r.arenas() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("filesystem record has more arenas than an int counts: "
          + r.arenas());
    }
    return new Geometry(r.blockSize(), r.firstBlock(), r.blocksPerArena(), (int) r.arenas());
  }

  long totalBlocks() {
    return blocksPerArena * arenas;
  }

  long arenaStart(int arena) {
    return firstBlock + arena * blocksPerArena;
  }

  long arenaEnd(int arena) {
    return arenaStart(arena) + blocksPerArena;
  }

  /** The arena holding {@code block}, or -1 outside the data area. */
  int arenaOf(long block) {
    if (block < firstBlock || block >= firstBlock + totalBlocks()) {
      return -1;
    }
    return (int) ((block - firstBlock) / blocksPerArena);
  }

  /** Cuts an extent at arena boundaries: the reverse map never has a key spanning two arenas. */
  List<Piece> split(Extent extent) {
    if (arenaOf(extent.start()) < 0 || arenaOf(extent.end() - 1) < 0) {
      throw new IllegalArgumentException("extent " + extent.start() + "+" + extent.length()
          + " lies outside the data area [" + firstBlock + ", " + (firstBlock + totalBlocks())
          + ")");
    }
    List<Piece> pieces = new ArrayList<>();
    long at = extent.start();
    while (at < extent.end()) {
      int arena = arenaOf(at);
      long end = Math.min(extent.end(), arenaEnd(arena));
      pieces.add(new Piece(arena, at, end));
      at = end;
    }
    return pieces;
  }
}
