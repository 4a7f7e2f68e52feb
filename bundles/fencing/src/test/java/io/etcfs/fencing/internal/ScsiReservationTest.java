package io.etcfs.fencing.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.spi.fencing.FenceException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reservation agent on SCSI, against a fake {@code sg_persist} that prints what the real one
 * prints (sg3-utils' {@code prin_work}: {@code --read-keys} and {@code --read-reservation} with
 * {@code --no-inquiry}) and records every command line.
 */
@Timeout(30)
class ScsiReservationTest {
  static final String DEV = "/dev/sdx";
  static final String READ_KEYS = "--no-inquiry --in --read-keys " + DEV;
  static final String READ_RES = "--no-inquiry --in --read-reservation " + DEV;
  static final String REGISTER = "--no-inquiry --out --register-ignore --param-sark=0x5 " + DEV;
  static final String RESERVE = "--no-inquiry --out --reserve --param-rk=0x5 --prout-type=5 " + DEV;
  static final String PREEMPT = "--no-inquiry --out --preempt-abort --param-rk=0x5 "
      + "--param-sark=0x7 --prout-type=5 " + DEV;
  static final String UNREGISTER = "--no-inquiry --out --register --param-rk=0x5 --param-sark=0 "
      + DEV;
  static final String NO_KEYS = "  PR generation=0x0, there are NO registered reservation keys\n";
  static final String NOT_HELD = "  PR generation=0x3, there is NO reservation held\n";
  private static final Duration T = Duration.ofSeconds(10);

  @TempDir Path tmp;
  private FakeTool sg;
  private ReservationFenceAgent agent;

  static String keys(long... keys) {
    String head = keys.length == 1 ? "1 registered reservation key follows:"
        : keys.length + " registered reservation keys follow:";
    return "  PR generation=0x3, " + head + "\n" + Arrays.stream(keys)
        .mapToObj(k -> "    0x" + Long.toHexString(k) + "\n").collect(Collectors.joining());
  }

  static String held(long key, String type) {
    return "  PR generation=0x3, Reservation follows:\n    Key=0x" + Long.toHexString(key)
        + "\n    scope: LU_SCOPE,  type: " + type + "\n";
  }

  static String held(long key) {
    return held(key, "Write Exclusive, registrants only");
  }

  @BeforeEach
  void fake() throws Exception {
    sg = new FakeTool(tmp, "sg_persist");
    agent = new ReservationFenceAgent(ReservationFenceAgent.tool(DEV, "scsi", sg.path(), "nvme"));
  }

  @Test
  void registerOnAnUnreservedDeviceRegistersThenReserves() throws Exception {
    sg.reply(1, NO_KEYS).reply(2, NOT_HELD);
    agent.register("n1", 5, T);
    assertEquals(List.of(READ_KEYS, READ_RES, REGISTER, RESERVE), sg.calls());
  }

  @Test
  void registerJoinsTheReservationAnotherNodeHolds() throws Exception {
    sg.reply(1, keys(3)).reply(2, held(3));
    agent.register("n1", 5, T);
    assertEquals(List.of(READ_KEYS, READ_RES, REGISTER), sg.calls());
  }

  @Test
  void registerAcceptsAReservationTakenMeanwhileByAnotherNode() throws Exception {
    sg.reply(1, NO_KEYS).reply(2, NOT_HELD)
        .fail(4, 24, "PR out (Reserve): Reservation conflict\n")
        .reply(5, keys(3, 5)).reply(6, held(3));
    agent.register("n1", 5, T);
    assertEquals(List.of(READ_KEYS, READ_RES, REGISTER, RESERVE, READ_KEYS, READ_RES), sg.calls());
  }

  @Test
  void registerRefusesAReservationOfAnotherType() throws Exception {
    sg.reply(1, keys(9)).reply(2, held(9, "Exclusive Access"));
    FenceException e = assertThrows(FenceException.class, () -> agent.register("n1", 5, T));
    assertEquals(DEV + " carries a reservation of type 'Exclusive Access' (key 0x9), not Write "
        + "Exclusive - Registrants Only: is something other than this cluster using the device?",
        e.getMessage());
  }

  @Test
  void fencePreemptsAndAbortsTheDeadKeyAndChecksItIsGone() throws Exception {
    registered();
    sg.reply(4, keys(5, 7)).reply(5, held(7)).reply(7, keys(5)).reply(8, held(5));
    agent.fence("n2", 7, T);
    assertEquals(List.of(READ_KEYS, READ_RES, PREEMPT, READ_KEYS, READ_RES), sg.calls().subList(3, 8));
  }

  @Test
  void fenceOfAKeyNoLongerRegisteredIsDoneAlready() throws Exception {
    registered();
    sg.reply(4, keys(5)).reply(5, held(5));
    agent.fence("n2", 7, T);
    assertEquals(List.of(READ_KEYS, READ_RES), sg.calls().subList(3, 5));
  }

  @Test
  void fenceFailsIfTheDeadKeyIsStillRegisteredAfterward() throws Exception {
    registered();
    sg.reply(4, keys(5, 7)).reply(5, held(7)).reply(7, keys(5, 7)).reply(8, held(5));
    FenceException e = assertThrows(FenceException.class, () -> agent.fence("n2", 7, T));
    assertEquals("key 0x7 of n2 is still registered on " + DEV + " after preempt-and-abort",
        e.getMessage());
  }

  @Test
  void fenceRefusesWhenThisNodesOwnKeyIsGone() throws Exception {
    registered();
    sg.reply(4, keys(7)).reply(5, held(7));
    FenceException e = assertThrows(FenceException.class, () -> agent.fence("n2", 7, T));
    assertEquals("cannot fence n2: this node's own key 0x5 is no longer registered on " + DEV
        + " (was this node fenced itself?)", e.getMessage());
    assertEquals(5, sg.calls().size());
  }

  @Test
  void fenceBeforeRegisterIsRefusedWithoutRunningAnything() throws Exception {
    FenceException e = assertThrows(FenceException.class, () -> agent.fence("n2", 7, T));
    assertTrue(e.getMessage().contains("register was not called"), e.getMessage());
    assertEquals(List.of(), sg.calls());
  }

  @Test
  void unregisterRemovesThisNodesKey() throws Exception {
    sg.reply(1, keys(3, 5)).reply(2, held(3));
    agent.unregister("n1", 5, T);
    assertEquals(List.of(READ_KEYS, READ_RES, UNREGISTER), sg.calls());
  }

  @Test
  void unregisterKeepsTheKeyThatHoldsTheReservation() throws Exception {
    sg.reply(1, keys(3, 5)).reply(2, held(5));
    agent.unregister("n1", 5, T);
    assertEquals(List.of(READ_KEYS, READ_RES), sg.calls());
  }

  @Test
  void aMissingToolSaysWhatToInstall() {
    String missing = tmp.resolve("nope/sg_persist").toString();
    ReservationFenceAgent a =
        new ReservationFenceAgent(ReservationFenceAgent.tool(DEV, "scsi", missing, "nvme"));
    FenceException e = assertThrows(FenceException.class, () -> a.register("n1", 5, T));
    assertEquals(missing + " not found: install sg3-utils", e.getMessage());
  }

  @Test
  void aFailingCommandIsNamedWithItsStatusAndLastErrorLine() throws Exception {
    sg.fail(1, 15, "sg_persist: error opening file (rw): /dev/sdx: No such file or directory\n");
    FenceException e = assertThrows(FenceException.class, () -> agent.register("n1", 5, T));
    assertEquals(sg.path() + " " + READ_KEYS + " failed with status 15: sg_persist: error opening"
        + " file (rw): /dev/sdx: No such file or directory", e.getMessage());
  }

  @Test
  void aHangingCommandIsKilledWhenTheTimeoutIsUp() throws Exception {
    registered();
    sg.reply(4, keys(5, 7)).reply(5, held(7)).hang(6);
    long start = System.nanoTime();
    FenceException e = assertThrows(FenceException.class,
        () -> agent.fence("n2", 7, Duration.ofSeconds(2)));
    assertEquals(sg.path() + " " + PREEMPT + " timed out after 2 s", e.getMessage());
    assertTrue(System.nanoTime() - start < 8_000_000_000L);
    assertTrue(Procs.gone(sg.childPid(), 2_000), "the fake's child still runs");
  }

  @Test
  void readKeysOutputIsParsedAsTheToolPrintsIt() throws Exception {
    assertEquals(List.of(0x5L, 0x74ca0002L, 0x74ca0002L),
        ScsiReservations.keys(List.of(keys(5, 0x74ca0002L, 0x74ca0002L).split("\n"))));
    assertEquals(List.of(), ScsiReservations.keys(List.of(NO_KEYS.strip())));
    assertThrows(FenceException.class, () -> ScsiReservations.keys(List.of("garbage")));
    assertThrows(FenceException.class, () -> ScsiReservations.reservation(List.of()));
  }

  @Test
  void theProtocolFollowsTheDeviceNameUnlessGiven() {
    assertInstanceOf(NvmeReservations.class,
        ReservationFenceAgent.tool("/dev/nvme0n1", "auto", "sg_persist", "nvme"));
    assertInstanceOf(ScsiReservations.class,
        ReservationFenceAgent.tool("/dev/sdb", "auto", "sg_persist", "nvme"));
    assertInstanceOf(NvmeReservations.class,
        ReservationFenceAgent.tool("/dev/sdb", "nvme", "sg_persist", "nvme"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ReservationFenceAgent.tool("/dev/sdb", "iscsi", "sg_persist", "nvme"));
    assertEquals("io.etcfs.fence.reservation: protocol must be scsi, nvme or auto (got 'iscsi')",
        e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> ReservationFenceAgent.tool(" ", "auto", "sg_persist", "nvme"));
    assertEquals("io.etcfs.fence.reservation: device is not set", e.getMessage());
  }

  /** Calls 1-3: this node registered key 0x5 while node n2 (key 0x7) held the reservation. */
  private void registered() throws Exception {
    sg.reply(1, keys(7)).reply(2, held(7));
    agent.register("n1", 5, T);
    assertEquals(List.of(READ_KEYS, READ_RES, REGISTER), sg.calls());
  }
}
