package io.etcfs.itests;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a {@link Probe}'s log says: completions and failures with wall-clock microseconds, and the
 * measures the fault tests and {@code bench/faults.sh} report (worst stall, failures after a
 * moment, MiB/s over a window, whether it still wrote at the end, which records were fsynced).
 * {@code main} prints them for the benchmark: {@code ProbeLog LOG SIZE FROM_US TO_US}.
 */
final class ProbeLog {
  /** One completed record. */
  record Done(long seq, long micros, boolean fsynced) {}

  /** One failed operation. */
  record Err(long micros, long seq, String text) {
    @Override
    public String toString() {
      return "seq " + seq + " at " + micros + ": " + text;
    }
  }

  final List<Done> done = new ArrayList<>();
  final List<Err> errors = new ArrayList<>();
  long start = -1;
  long end = -1;

  static ProbeLog read(Path log) throws IOException {
    ProbeLog p = new ProbeLog();
    List<String> lines;
    try {
      lines = Files.readAllLines(log);
    } catch (NoSuchFileException e) {
      return p;
    }
    for (String l : lines) {
      String[] f = l.split(" ", 4);
      if (f.length < 2) {
        continue; // a line torn by a kill
      }
      try {
        switch (f[0]) {
          case "START" -> p.start = Long.parseLong(f[1]);
          case "END" -> p.end = Long.parseLong(f[1]);
          case "ERR" -> p.errors.add(new Err(Long.parseLong(f[1]),
              f.length > 2 ? Long.parseLong(f[2]) : -1, f.length > 3 ? f[3] : ""));
          default -> {
            if (f.length >= 3) {
              p.done.add(new Done(Long.parseLong(f[0]), Long.parseLong(f[1]),
                  f[2].equals("fsynced")));
            }
          }
        }
      } catch (NumberFormatException e) {
        // a torn last line
      }
    }
    return p;
  }

  /** The first completion at or after {@code micros}, or -1. */
  long firstDoneAfter(long micros) {
    return done.stream().mapToLong(Done::micros).filter(t -> t >= micros).min().orElse(-1);
  }

  long lastDone() {
    return done.isEmpty() ? -1 : done.get(done.size() - 1).micros();
  }

  /**
   * The longest time in [from, to] without a completion, counting from {@code from} to the first
   * one and from the last one to {@code to}: a writer silent through the whole window has a
   * stall of the whole window.
   */
  long worstStallMicros(long from, long to) {
    long prev = from;
    long worst = 0;
    for (Done d : done) {
      if (d.micros() < from) {
        continue;
      }
      if (d.micros() > to) {
        break;
      }
      worst = Math.max(worst, d.micros() - prev);
      prev = d.micros();
    }
    return Math.max(worst, to - prev);
  }

  List<Err> errorsAfter(long micros) {
    return errors.stream().filter(e -> e.micros() >= micros).toList();
  }

  long completedBetween(long from, long to) {
    return done.stream().filter(d -> d.micros() >= from && d.micros() < to).count();
  }

  double mibPerSec(long from, long to, int recordSize) {
    return completedBetween(from, to) * (double) recordSize / (1 << 20) / ((to - from) / 1e6);
  }

  /** Whether a record completed in the {@code windowMicros} before {@code at}. */
  boolean writingAt(long at, long windowMicros) {
    return done.stream().anyMatch(d -> d.micros() <= at && d.micros() > at - windowMicros);
  }

  List<Long> fsyncedBefore(long micros) {
    return done.stream().filter(d -> d.fsynced() && d.micros() < micros).map(Done::seq).toList();
  }

  /** The highest seq any line names (completed or failed), or -1. */
  long maxSeq() {
    long m = done.stream().mapToLong(Done::seq).max().orElse(-1);
    return Math.max(m, errors.stream().mapToLong(Err::seq).max().orElse(-1));
  }

  /**
   * The latest completed record of each slot (seq mod slots), for checking a wrapping region: the
   * record a slot must hold once the probe ended cleanly.
   */
  Map<Long, Long> latestPerSlot(long slots) {
    Map<Long, Long> m = new HashMap<>();
    for (Done d : done) {
      m.merge(d.seq() % slots, d.seq(), Math::max);
    }
    return m;
  }

  /**
   * Reads each given record of writer {@code id} from {@code file} (through whichever mount it is
   * on) and returns a description of every one that differs from what the writer wrote.
   */
  static List<String> verify(Path file, int id, int size, long offset, long slots,
      Iterable<Long> seqs) throws IOException {
    List<String> bad = new ArrayList<>();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      for (long seq : seqs) {
        long at = offset + (seq % slots) * size;
        ByteBuffer got = ByteBuffer.allocate(size);
        while (got.hasRemaining()) {
          if (ch.read(got, at + got.position()) < 0) {
            break;
          }
        }
        ByteBuffer want = Probe.record(id, seq, size);
        if (!got.flip().equals(want)) {
          bad.add("record " + seq + " at offset " + at + ": " + describe(got, want));
        }
      }
    }
    return bad;
  }

  /**
   * Checks every slot of writer {@code id}'s region for what a writer that may have lost
   * unsynced records can leave: zeros (never committed) or one of its own records, whole, in the
   * slot it belongs to. Returns a description of every other slot.
   */
  static List<String> scan(Path file, int id, int size, long offset, long slots)
      throws IOException {
    List<String> bad = new ArrayList<>();
    ByteBuffer zeros = ByteBuffer.allocate(size);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      for (long slot = 0; slot < slots; slot++) {
        ByteBuffer got = ByteBuffer.allocate(size);
        long at = offset + slot * size;
        while (got.hasRemaining() && ch.read(got, at + got.position()) >= 0) {
          // read on
        }
        got.flip();
        if (got.remaining() < size) {
          if (got.remaining() == 0 || got.equals(zeros.duplicate().limit(got.remaining()))) {
            continue; // beyond the end of the file, or a zero tail
          }
          bad.add("slot " + slot + ": a torn record at the end of the file");
          continue;
        }
        if (got.equals(zeros.duplicate().clear())) {
          continue;
        }
        long seq = got.getLong(8);
        if (got.getInt(0) != Probe.MAGIC || got.getInt(4) != id || seq % slots != slot
            || !got.equals(Probe.record(id, seq, size))) {
          bad.add("slot " + slot + " at offset " + at + ": not a whole record of writer " + id
              + " (" + describe(got, Probe.record(id, Math.max(seq, 0), size)) + ")");
        }
      }
    }
    return bad;
  }

  private static String describe(ByteBuffer got, ByteBuffer want) {
    if (got.remaining() < want.remaining()) {
      return "short read, " + got.remaining() + " of " + want.remaining() + " bytes";
    }
    int first = got.mismatch(want);
    return "first differing byte at " + first + " (header says writer " + got.getInt(4)
        + " seq " + got.getLong(8) + ")";
  }

  /** Benchmark helper: {@code ProbeLog LOG RECORD_SIZE FROM_US TO_US} prints its measures. */
  public static void main(String[] args) throws IOException {
    ProbeLog p = read(Path.of(args[0]));
    int size = Integer.parseInt(args[1]);
    long from = Long.parseLong(args[2]);
    long to = Long.parseLong(args[3]);
    System.out.printf(Locale.ROOT, "stall_ms=%.1f mibs=%.2f errors=%d first_after_ms=%s"
            + " last_us=%d writing_at_end=%s%n",
        p.worstStallMicros(from, to) / 1e3, p.mibPerSec(from, to, size),
        p.errorsAfter(from).size(),
        p.firstDoneAfter(from) < 0 ? "none"
            : String.format(Locale.ROOT, "%.1f", (p.firstDoneAfter(from) - from) / 1e3),
        p.lastDone(), p.writingAt(to, 1_000_000));
  }
}
