package io.etcfs.fencing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.etcfs.spi.fencing.FenceException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reservation agent on NVMe, against a fake {@code nvme} that prints {@code resv-report} the
 * way nvme-cli does (the 1.x/2.x layout with {@code regctl[i]}, and the newer one with
 * {@code registrantext[i]} for the extended data structure) and records every command line.
 */
@Timeout(30)
class NvmeReservationTest {
  static final String DEV = "/dev/nvme0n1";
  static final String REPORT = "resv-report " + DEV;
  static final String REPORT_EDS = "resv-report " + DEV + " --eds";
  static final String REGISTER = "resv-register " + DEV + " --nrkey=0x5 --rrega=0";
  static final String REPLACE = "resv-register " + DEV + " --nrkey=0x5 --rrega=2 --iekey";
  static final String ACQUIRE = "resv-acquire " + DEV + " --crkey=0x5 --rtype=3 --racqa=0";
  static final String PREEMPT = "resv-acquire " + DEV + " --crkey=0x5 --prkey=0x7 --rtype=3"
      + " --racqa=2";
  static final String UNREGISTER = "resv-register " + DEV + " --crkey=0x5 --rrega=1";
  private static final Duration T = Duration.ofSeconds(10);

  @TempDir Path tmp;
  private FakeTool nvme;
  private ReservationFenceAgent agent;

  /** nvme-cli 1.x/2.x {@code show_nvme_resv_report}: rkey in hex without a prefix. */
  static String report(int rtype, long holder, long... keys) {
    StringBuilder b = new StringBuilder("\nNVME Reservation status:\n\n");
    b.append("gen       : 4\nregctl    : ").append(keys.length).append("\nrtype     : ")
        .append(rtype).append("\nptpls     : 0\n");
    for (int i = 0; i < keys.length; i++) {
      b.append("regctl[").append(i).append("] :\n  cntlid  : ").append(i + 1)
          .append("\n  rcsts   : ").append(keys[i] == holder && rtype != 0 ? 1 : 0)
          .append("\n  hostid  : 0\n  rkey    : ").append(Long.toHexString(keys[i])).append('\n');
    }
    return b.append('\n').toString();
  }

  @BeforeEach
  void fake() throws Exception {
    nvme = new FakeTool(tmp, "nvme");
    agent = new ReservationFenceAgent(ReservationFenceAgent.tool(DEV, "auto", "sg_persist",
        nvme.path()));
  }

  @Test
  void registerOnAnUnreservedNamespaceRegistersThenAcquires() throws Exception {
    nvme.reply(1, report(0, 0));
    agent.register("n1", 5, T);
    assertEquals(List.of(REPORT, REGISTER, ACQUIRE), nvme.calls());
  }

  @Test
  void registerReplacesAKeyThisHostStillHolds() throws Exception {
    nvme.reply(1, report(3, 9, 9)).fail(2, 1, "NVMe status: Reservation Conflict: The command was"
        + " aborted due to a conflict with a reservation held on the accessed namespace(0x83)\n");
    agent.register("n1", 5, T);
    assertEquals(List.of(REPORT, REGISTER, REPLACE), nvme.calls());
  }

  @Test
  void fencePreemptsAndAbortsTheDeadKey() throws Exception {
    nvme.reply(1, report(3, 7, 7));
    agent.register("n1", 5, T);
    nvme.reply(3, report(3, 7, 5, 7)).reply(5, report(3, 5, 5));
    agent.fence("n2", 7, T);
    assertEquals(List.of(REPORT, REGISTER, REPORT, PREEMPT, REPORT), nvme.calls());
  }

  @Test
  void theExtendedReportIsAskedWhenThePlainOneIsRefused() throws Exception {
    nvme.fail(1, 1, "NVMe status: Host Identifier Inconsistent Format(0x18)\n").reply(2, """

        NVME Reservation status:

        gen      : 4
        rtype    : 3
        regstrnt : 1
        ptpls    : 0
        registrantext[0] :
          cntlid : 1
          rcsts  : 1
          rkey   : 7
          hostid : f1fb429f7f4856b0b351e6b8de349a1c

        """);
    agent.register("n1", 5, T);
    assertEquals(List.of(REPORT, REPORT_EDS, REGISTER), nvme.calls());
  }

  @Test
  void unregisterRemovesThisNodesKey() throws Exception {
    nvme.reply(1, report(3, 7, 5, 7));
    agent.unregister("n1", 5, T);
    assertEquals(List.of(REPORT, UNREGISTER), nvme.calls());
  }

  @Test
  void unregisterKeepsTheKeyThatHoldsTheReservation() throws Exception {
    nvme.reply(1, report(3, 5, 5, 7));
    agent.unregister("n1", 5, T);
    assertEquals(List.of(REPORT), nvme.calls());
  }

  @Test
  void allRegistrantsIsNotTheTypeThisClusterUses() throws Exception {
    nvme.reply(1, report(5, 9, 9));
    FenceException e = assertThrows(FenceException.class, () -> agent.register("n1", 5, T));
    assertEquals(DEV + " carries a reservation of type 'Write Exclusive - All Registrants' (key "
        + "0x9), not Write Exclusive - Registrants Only: is something other than this cluster "
        + "using the device?", e.getMessage());
  }

  @Test
  void aMissingToolSaysWhatToInstall() {
    String missing = tmp.resolve("nope/nvme").toString();
    ReservationFenceAgent a =
        new ReservationFenceAgent(ReservationFenceAgent.tool(DEV, "nvme", "sg_persist", missing));
    FenceException e = assertThrows(FenceException.class, () -> a.register("n1", 5, T));
    assertEquals(missing + " not found: install nvme-cli", e.getMessage());
  }

  @Test
  void aFailedReportNamesTheLastErrorLine() throws Exception {
    nvme.fail(1, 1, "x\n").fail(2, 1, "get-namespace-id: Inappropriate ioctl for device\n");
    FenceException e = assertThrows(FenceException.class, () -> agent.unregister("n1", 5, T));
    assertEquals(nvme.path() + " resv-report --eds on " + DEV + " failed with status 1: "
        + "get-namespace-id: Inappropriate ioctl for device", e.getMessage());
  }
}
