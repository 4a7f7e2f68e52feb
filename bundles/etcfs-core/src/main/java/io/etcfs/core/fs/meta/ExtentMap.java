package io.etcfs.core.fs.meta;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Operations on a sorted, non-overlapping list of {@link FileExtent}s. Pure functions: the
 * same list is shared by readers while a writer builds the next one.
 */
public final class ExtentMap {
  private ExtentMap() {}

  /** The list without file blocks [from, to); the parts taken out are added to {@code removed}. */
  public static List<FileExtent> punch(
      List<FileExtent> list, long from, long to, List<FileExtent> removed) {
    List<FileExtent> out = new ArrayList<>(list.size() + 1);
    for (FileExtent e : list) {
      if (e.fileEnd() <= from || e.fileBlock() >= to) {
        out.add(e);
        continue;
      }
      FileExtent before = e.slice(e.fileBlock(), from);
      FileExtent gone = e.slice(from, to);
      FileExtent after = e.slice(to, e.fileEnd());
      if (before != null) {
        out.add(before);
      }
      removed.add(gone);
      if (after != null) {
        out.add(after);
      }
    }
    return out;
  }

  /**
   * Maps {@code added} (which must not overlap each other) over the list, replacing what they
   * cover; what they replace is added to {@code removed}. The result is coalesced.
   */
  public static List<FileExtent> overwrite(
      List<FileExtent> list, List<FileExtent> added, List<FileExtent> removed) {
    List<FileExtent> out = list;
    for (FileExtent a : added) {
      out = punch(out, a.fileBlock(), a.fileEnd(), removed);
    }
    out = new ArrayList<>(out);
    out.addAll(added);
    out.sort(Comparator.comparingLong(FileExtent::fileBlock));
    return coalesce(out);
  }

  /** Joins neighbours that continue each other on the file and on the device. */
  public static List<FileExtent> coalesce(List<FileExtent> sorted) {
    List<FileExtent> out = new ArrayList<>(sorted.size());
    for (FileExtent e : sorted) {
      FileExtent last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && last.fileEnd() == e.fileBlock()
          && last.deviceBlock() + last.length() == e.deviceBlock()) {
        out.set(out.size() - 1,
            new FileExtent(last.fileBlock(), last.deviceBlock(), last.length() + e.length()));
      } else {
        out.add(e);
      }
    }
    return out;
  }

  /** The index of the extent holding {@code block}, or -(insertion point) - 1. */
  public static int find(List<FileExtent> list, long block) {
    int lo = 0;
    int hi = list.size() - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      FileExtent e = list.get(mid);
      if (e.fileEnd() <= block) {
        lo = mid + 1;
      } else if (e.fileBlock() > block) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -lo - 1;
  }

  public static long blocks(List<FileExtent> list) {
    return list.stream().mapToLong(FileExtent::length).sum();
  }

  /** True if the list is sorted, non-overlapping and coalesced. */
  public static boolean wellFormed(List<FileExtent> list) {
    for (int i = 1; i < list.size(); i++) {
      FileExtent a = list.get(i - 1);
      FileExtent b = list.get(i);
      if (a.fileEnd() > b.fileBlock()
          || (a.fileEnd() == b.fileBlock() && a.deviceBlock() + a.length() == b.deviceBlock())) {
        return false;
      }
    }
    return true;
  }
}
