package io.etcfs.itests;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * A writer run as its own process ({@code java -cp itests/target/test-classes
 * io.etcfs.itests.Probe ...}, JDK only), so a write stuck in FUSE can be killed by pid. It writes
 * fixed-size records into a region of one file, the record of sequence number {@code n} at
 * {@code offset + (n mod slots) × size}, optionally fsyncs each, and appends to a local log one
 * line per outcome, with wall-clock microseconds so the test's and other processes' times compare:
 *
 * <pre>
 *   START &lt;µs&gt;                      the file is open, the first write begins
 *   &lt;seq&gt; &lt;µs&gt; fsynced|written      a record completed
 *   ERR &lt;µs&gt; &lt;seq&gt; &lt;errno text&gt;     a write, fsync or open failed
 * </pre>
 *
 * <p>A record: magic {@code PRB1}, writer id (int), seq (long), payload length (int), CRC32C of
 * the payload (int), then the payload, bytes derived from (writer id, seq) alone, so a reader
 * recomputes what each record must hold. After a failure the probe waits 20 ms (a fenced mount
 * answers at once: without the pause the log would fill the disk), reopens the file and goes on
 * with the next seq. It runs until killed, for {@code --seconds}, or for {@code --records}.
 *
 * <p>Options: {@code --file F --log L [--id N] [--size BYTES] [--offset BYTES] [--slots N]
 * [--fsync] [--append] [--seconds S] [--records N] [--await-mount MP] [--stop-file P]}: it ends
 * cleanly (line {@code END}) once the local file P exists. {@code --append} writes
 * with O_APPEND (offsets are then the cluster's). {@code --await-mount} polls
 * /proc/self/mountinfo every millisecond until MP is a FUSE mount before opening the file, so a
 * probe started beside {@code etcfs mount} measures the time to the first write on the new mount.
 */
public final class Probe {
  static final int HEADER = 24;
  static final int MAGIC = 0x50524231; // "PRB1"

  final Path file;
  final Path log;
  final int id;
  final int size;
  final long offset;
  final long slots;
  final boolean fsync;
  final boolean append;
  final double seconds;
  final long records;
  final Path awaitMount;
  final Path stopFile;

  private Probe(Args a) {
    file = Path.of(a.need("--file"));
    log = Path.of(a.need("--log"));
    id = Integer.parseInt(a.get("--id", "1"));
    size = Integer.parseInt(a.get("--size", "65536"));
    offset = Long.parseLong(a.get("--offset", "0"));
    slots = Long.parseLong(a.get("--slots", "4096"));
    fsync = a.flag("--fsync");
    append = a.flag("--append");
    seconds = Double.parseDouble(a.get("--seconds", "0"));
    records = Long.parseLong(a.get("--records", "0"));
    String mp = a.get("--await-mount", null);
    awaitMount = mp == null ? null : Path.of(mp);
    String stop = a.get("--stop-file", null);
    stopFile = stop == null ? null : Path.of(stop);
    if (size < HEADER + 1) {
      throw new IllegalArgumentException("--size must be more than " + HEADER);
    }
  }

  public static void main(String[] args) throws Exception {
    new Probe(new Args(args)).run();
  }

  /** Wall-clock microseconds since the epoch: comparable across processes, unlike nanoTime. */
  static long nowMicros() {
    Instant t = Instant.now();
    return t.getEpochSecond() * 1_000_000L + t.getNano() / 1000;
  }

  private void run() throws Exception {
    long deadline = seconds > 0 ? System.nanoTime() + (long) (seconds * 1e9) : Long.MAX_VALUE;
    try (BufferedWriter out = Files.newBufferedWriter(log, StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
      if (awaitMount != null) {
        awaitMount(awaitMount);
      }
      FileChannel ch = null;
      boolean started = false;
      for (long seq = 0; (records == 0 || seq < records) && System.nanoTime() < deadline
          && (stopFile == null || !Files.exists(stopFile)); seq++) {
        try {
          if (ch == null) {
            ch = open();
          }
          if (!started) {
            line(out, "START " + nowMicros());
            started = true;
          }
          ByteBuffer rec = record(id, seq, size);
          if (append) {
            while (rec.hasRemaining()) {
              ch.write(rec);
            }
          } else {
            long at = offset + (seq % slots) * size;
            while (rec.hasRemaining()) {
              at += ch.write(rec, at);
            }
          }
          if (fsync) {
            ch.force(true);
          }
          line(out, seq + " " + nowMicros() + (fsync ? " fsynced" : " written"));
        } catch (IOException e) {
          line(out, "ERR " + nowMicros() + " " + seq + " " + errno(e));
          closeQuietly(ch);
          ch = null;
          TimeUnit.MILLISECONDS.sleep(20);
        }
      }
      closeQuietly(ch);
      line(out, "END " + nowMicros());
    }
  }

  private FileChannel open() throws IOException {
    List<StandardOpenOption> opts = new ArrayList<>(List.of(StandardOpenOption.CREATE,
        StandardOpenOption.WRITE));
    if (append) {
      opts.add(StandardOpenOption.APPEND);
    }
    return FileChannel.open(file, opts.toArray(new StandardOpenOption[0]));
  }

  private static void line(BufferedWriter out, String s) throws IOException {
    out.write(s);
    out.write('\n');
    out.flush();
  }

  private static String errno(IOException e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return m.replace('\n', ' ');
  }

  private static void closeQuietly(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException e) {
        // a fenced or dead mount may fail the close too; the log already says why
      }
    }
  }

  static void awaitMount(Path mp) throws IOException, InterruptedException {
    String needle = " " + mp.toAbsolutePath().normalize() + " ";
    while (true) {
      for (String l : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
        if (l.contains(needle) && l.contains(" - fuse")) {
          return;
        }
      }
      TimeUnit.MILLISECONDS.sleep(1);
    }
  }

  /** The record {@code seq} of writer {@code id}: header, then a payload only they determine. */
  static ByteBuffer record(int id, long seq, int size) {
    ByteBuffer b = ByteBuffer.allocate(size);
    byte[] payload = payload(id, seq, size - HEADER);
    CRC32C crc = new CRC32C();
    crc.update(payload);
    b.putInt(MAGIC).putInt(id).putLong(seq).putInt(payload.length).putInt((int) crc.getValue());
    b.put(payload).flip();
    return b;
  }

  static byte[] payload(int id, long seq, int length) {
    byte[] p = new byte[length];
    long x = (seq + 1) * 0x9E3779B97F4A7C15L ^ ((long) id << 32);
    for (int i = 0; i < length; i += 8) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      for (int j = 0; j < 8 && i + j < length; j++) {
        p[i + j] = (byte) (x >>> (8 * j));
      }
    }
    return p;
  }

  /** Minimal {@code --key value} / {@code --flag} parsing. */
  static final class Args {
    private final List<String> a;

    Args(String[] args) {
      a = List.of(args);
    }

    String get(String k, String dflt) {
      int i = a.indexOf(k);
      return i >= 0 && i + 1 < a.size() ? a.get(i + 1) : dflt;
    }

    String need(String k) {
      String v = get(k, null);
      if (v == null) {
        throw new IllegalArgumentException("missing " + k);
      }
      return v;
    }

    boolean flag(String k) {
      return a.contains(k);
    }
  }
}
