package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The fault tests' checker catches what it claims to: a changed byte, a record out of place. */
@Timeout(60)
class ProbeLogTest {
  @TempDir Path tmp;

  @Test
  void aProbesRecordsVerifyAndADamagedOneIsNamed() throws Exception {
    Path file = tmp.resolve("f");
    Path log = tmp.resolve("log");
    Probe.main(new String[] {"--file", file.toString(), "--log", log.toString(), "--id", "7",
        "--size", "4096", "--slots", "8", "--records", "12", "--fsync"});
    ProbeLog l = ProbeLog.read(log);
    assertEquals(12, l.done.size());
    assertTrue(l.start > 0 && l.end >= l.start);
    assertEquals(List.of(8L, 9L, 10L, 11L, 4L, 5L, 6L, 7L),
        List.copyOf(l.latestPerSlot(8).values()).stream().sorted((a, b) -> Long.compare(
            a % 8, b % 8)).toList());
    assertEquals(List.of(), ProbeLog.verify(file, 7, 4096, 0, 8, l.latestPerSlot(8).values()));
    assertEquals(List.of(), ProbeLog.scan(file, 7, 4096, 0, 8));
    assertEquals(1, ProbeLog.verify(file, 7, 4096, 0, 8, List.of(0L)).size(),
        "slot 0 holds record 8, not record 0");
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {42}), 3 * 4096 + 1000);
    }
    List<String> bad = ProbeLog.verify(file, 7, 4096, 0, 8, l.latestPerSlot(8).values());
    assertEquals(1, bad.size());
    assertTrue(bad.get(0).contains("record 11"), bad.get(0));
    assertEquals(1, ProbeLog.scan(file, 7, 4096, 0, 8).size());
    assertEquals(8, ProbeLog.scan(file, 6, 4096, 0, 8).size(), "another writer's records");
  }

  @Test
  void stallsCountTheWindowsEdgesAndErrorsAreParsed() throws Exception {
    Path log = tmp.resolve("log");
    Files.writeString(log, "START 1000\n0 2000 written\n1 2500 fsynced\nERR 9000 2 Input/output"
        + " error\n3 10000 written\n4 10");
    ProbeLog l = ProbeLog.read(log);
    assertEquals(3, l.done.size(), "records 0, 1 and 3; a torn last line is none");
    assertEquals(7500, l.worstStallMicros(0, 10_500));
    assertEquals(20_000, l.worstStallMicros(11_000, 31_000), "silent for the whole window");
    assertEquals(List.of(1L), l.fsyncedBefore(9000));
    assertEquals("Input/output error", l.errorsAfter(5000).get(0).text());
    assertEquals(10_000, l.firstDoneAfter(3000));
    assertTrue(l.writingAt(10_500, 1000));
    assertFalse(l.writingAt(9_500, 1000));
  }
}
