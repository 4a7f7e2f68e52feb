package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.alloc.Extent;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * Where the arenas lie on the device, in device blocks (counted from byte 0). Decoded from the
 * filesystem record's Properties text here because the core's {@code FsRecord} is not exported
 * to plug-ins; only the geometry fields are read.
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
    Properties p = new Properties();
    try {
      p.load(new StringReader(new String(record, StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new IllegalArgumentException("unreadable filesystem record: " + e.getMessage(), e);
    }
    int blockSize = Integer.parseInt(field(p, "blockSize"));
    long arenaSize = Long.parseLong(field(p, "arenaSize"));
    long dataStart = Long.parseLong(field(p, "dataStart"));
    long arenas = Long.parseLong(field(p, "arenas"));
    Long.parseLong(field(p, "deviceSize"));
    if (blockSize <= 0 || arenaSize <= 0 || arenaSize % blockSize != 0
        || dataStart % blockSize != 0 || arenas < 0 || arenas > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("filesystem record has an impossible geometry: blockSize "
          + blockSize + ", arenaSize " + arenaSize + ", dataStart " + dataStart + ", arenas "
          + arenas);
    }
    return new Geometry(blockSize, dataStart / blockSize, arenaSize / blockSize, (int) arenas);
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

  private static String field(Properties p, String name) {
    String v = p.getProperty(name);
    if (v == null) {
      throw new IllegalArgumentException("filesystem record lacks '" + name + "'");
    }
    return v.trim();
  }
}
