package io.etcfs.core.fs.plock;

import io.etcfs.spi.vfs.PosixLock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The fcntl locks one owner holds on one inode: disjoint spans in start order, neighbours of the
 * same type merged, exactly as the kernel keeps a process's POSIX locks. Setting a range replaces
 * whatever the owner held there (splitting spans it cuts), so a write lock inside a read lock
 * leaves a read span on each side. Immutable.
 *
 * <p>Stored as the value of the owner's key: a line {@code pid <pid>}, then one line per span,
 * {@code R|W <start> <end>} in decimal (end inclusive, {@link PosixLock#EOF} to the end).
 */
final class OwnerRanges {
  static final OwnerRanges NONE = new OwnerRanges(List.of(), 0);

  private final List<Span> spans;
  private final int pid;

  private OwnerRanges(List<Span> spans, int pid) {
    this.spans = List.copyOf(spans);
    this.pid = pid;
  }

  List<Span> spans() {
    return spans;
  }

  int pid() {
    return pid;
  }

  boolean isEmpty() {
    return spans.isEmpty();
  }

  /** These ranges after {@code type} is set on [start, end] (UNLOCK clears it). */
  OwnerRanges with(PosixLock.Type type, long start, long end, int newPid) {
    List<Span> cut = new ArrayList<>();
    for (Span s : spans) {
      if (!s.overlaps(start, end)) {
        cut.add(s);
        continue;
      }
      if (s.start() < start) {
        cut.add(new Span(s.write(), s.start(), start - 1));
      }
      if (s.end() > end) {
        cut.add(new Span(s.write(), end + 1, s.end()));
      }
    }
    if (type != PosixLock.Type.UNLOCK) {
      cut.add(new Span(type == PosixLock.Type.WRITE, start, end));
    }
    cut.sort(Comparator.comparingLong(Span::start));
    return new OwnerRanges(merged(cut), type == PosixLock.Type.UNLOCK ? pid : newPid);
  }

  /** Joins touching spans of one type; the input is disjoint and sorted. */
  private static List<Span> merged(List<Span> sorted) {
    List<Span> out = new ArrayList<>();
    for (Span s : sorted) {
      Span last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && last.write() == s.write() && last.end() != PosixLock.EOF
          && last.end() + 1 == s.start()) {
        out.set(out.size() - 1, new Span(s.write(), last.start(), s.end()));
      } else {
        out.add(s);
      }
    }
    return out;
  }

  /** The first span that a request of another owner for [start, end] conflicts with, or null. */
  Span conflict(boolean write, long start, long end) {
    for (Span s : spans) {
      if (s.conflicts(write, start, end)) {
        return s;
      }
    }
    return null;
  }

  boolean sameSpans(OwnerRanges other) {
    return spans.equals(other.spans);
  }

  String encode() {
    StringBuilder b = new StringBuilder("pid ").append(pid).append('\n');
    for (Span s : spans) {
      b.append(s.write() ? 'W' : 'R').append(' ').append(s.start()).append(' ').append(s.end())
          .append('\n');
    }
    return b.toString();
  }

  /** Reads a stored value; a value this code did not write is a bug, not a user error. */
  static OwnerRanges decode(String value) {
    List<Span> spans = new ArrayList<>();
    int pid = 0;
    for (String line : value.split("\n")) {
      String[] f = line.split(" ");
      if (f.length == 2 && f[0].equals("pid")) {
        pid = Integer.parseInt(f[1]);
      } else if (f.length == 3 && (f[0].equals("R") || f[0].equals("W"))) {
        spans.add(new Span(f[0].equals("W"), Long.parseLong(f[1]), Long.parseLong(f[2])));
      } else if (!line.isEmpty()) {
        throw new IllegalStateException("unreadable fcntl lock record line '" + line + "'");
      }
    }
    return new OwnerRanges(spans, pid);
  }

  @Override
  public String toString() {
    return encode().replace('\n', ';');
  }
}
