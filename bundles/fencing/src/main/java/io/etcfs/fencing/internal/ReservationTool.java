package io.etcfs.fencing.internal;

import io.etcfs.spi.fencing.FenceException;
import java.util.List;
import java.util.Optional;

/**
 * Persistent-reservation commands on one device through one command-line tool. Every method runs
 * the tool and throws {@link FenceException} if it is not installed, exits non-zero or does not
 * finish within the budget. Keys are the 64-bit reservation keys; the reservation type is always
 * Write Exclusive – Registrants Only (registered hosts write, everyone else only reads).
 */
interface ReservationTool {

  /** The device's reservation, if it has one. */
  record Reservation(long holderKey, String type, boolean writeExclusiveRegistrantsOnly) {}

  /** The registered keys (one per registered path or host, so a key may repeat). */
  record Status(List<Long> keys, Optional<Reservation> reservation) {}

  /** The device this tool works on. */
  String device();

  Status status(TimeBudget budget) throws FenceException;

  /** Registers {@code key} for this host, replacing a key this host may still have registered. */
  void register(long key, TimeBudget budget) throws FenceException;

  /** Takes the reservation, holding {@code key}. */
  void reserve(long key, TimeBudget budget) throws FenceException;

  /**
   * Removes every registration of {@code dead} and aborts its queued commands; if {@code dead}
   * held the reservation, it passes to {@code ours}.
   */
  void preemptAbort(long ours, long dead, TimeBudget budget) throws FenceException;

  /** Removes this host's registration of {@code key}. */
  void unregister(long key, TimeBudget budget) throws FenceException;

  /** A key as both tools take and the logs show it. */
  static String hex(long key) {
    return "0x" + Long.toHexString(key);
  }
}
