package io.etcfs.fencing.internal;

import static io.etcfs.fencing.internal.ReservationTool.hex;

import io.etcfs.spi.fencing.FenceException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * NVMe reservations through {@code nvme} (nvme-cli) on a namespace block device. Options are
 * given in their long forms, which every nvme-cli release spells the same; keys in hex, which
 * nvme-cli reads with {@code strtoull(…, 0)}.
 *
 * <p>NVMe numbers the reservation types differently from SCSI: Write Exclusive – Registrants
 * Only is {@code rtype} 3 here (5 is Write Exclusive – All Registrants).
 */
final class NvmeReservations implements ReservationTool {
  static final int RTYPE = 3;
  private static final String[] TYPES = {"none", "Write Exclusive", "Exclusive Access",
      "Write Exclusive - Registrants Only", "Exclusive Access - Registrants Only",
      "Write Exclusive - All Registrants", "Exclusive Access - All Registrants"};
  private static final Pattern FIELD = Pattern.compile("^\\s*(\\w+)\\s*:\\s*([0-9a-fA-F]+)\\s*$");

  private final String tool;
  private final String device;

  NvmeReservations(String tool, String device) {
    this.tool = tool;
    this.device = device;
  }

  @Override
  public String device() {
    return device;
  }

  /**
   * A controller that identifies hosts by 128-bit host identifiers (NVMe over Fabrics) answers
   * only the extended report ({@code --eds}), one with 64-bit identifiers only the plain one: the
   * plain one is asked first.
   */
  @Override
  public Status status(TimeBudget budget) throws FenceException {
    CommandRunner.Result plain = call(budget, "resv-report");
    if (plain.exit() == 0) {
      return parse(plain);
    }
    return parse(check(call(budget, "resv-report", "--eds"), "resv-report --eds"));
  }

  /**
   * Register, or, if this host still has an older key registered (it left as the reservation
   * holder, see docs/fence-agents.md), replace that key whatever it is.
   */
  @Override
  public void register(long key, TimeBudget budget) throws FenceException {
    if (call(budget, "resv-register", "--nrkey=" + hex(key), "--rrega=0").exit() != 0) {
      run(budget, "resv-register", "--nrkey=" + hex(key), "--rrega=2", "--iekey");
    }
  }

  @Override
  public void reserve(long key, TimeBudget budget) throws FenceException {
    run(budget, "resv-acquire", "--crkey=" + hex(key), "--rtype=" + RTYPE, "--racqa=0");
  }

  @Override
  public void preemptAbort(long ours, long dead, TimeBudget budget) throws FenceException {
    run(budget, "resv-acquire", "--crkey=" + hex(ours), "--prkey=" + hex(dead),
        "--rtype=" + RTYPE, "--racqa=2");
  }

  @Override
  public void unregister(long key, TimeBudget budget) throws FenceException {
    run(budget, "resv-register", "--crkey=" + hex(key), "--rrega=1");
  }

  private void run(TimeBudget budget, String command, String... options) throws FenceException {
    check(call(budget, command, options), command);
  }

  private CommandRunner.Result call(TimeBudget budget, String command, String... options)
      throws FenceException {
    List<String> argv = new ArrayList<>(List.of(tool, command, device));
    argv.addAll(List.of(options));
    return CommandRunner.run(String.join(" ", argv), argv, Map.of(), budget,
        tool + " not found: install nvme-cli");
  }

  private CommandRunner.Result check(CommandRunner.Result r, String what) throws FenceException {
    if (r.exit() != 0) {
      throw new FenceException(tool + " " + what + " on " + device + " failed with status "
          + r.exit() + ": " + r.lastErrLine());
    }
    return r;
  }

  /**
   * Parses {@code nvme resv-report}'s normal output: {@code rtype : N}, then per registrant
   * {@code rcsts : X} (bit 0: holds the reservation) before {@code rkey : X} (hex, no prefix).
   * Older nvme-cli releases say {@code regctl[i]}, newer ones {@code registrant[i]} or
   * {@code registrantext[i]}; the field names are the same in all.
   */
  static Status parse(CommandRunner.Result r) throws FenceException {
    Integer rtype = null;
    int rcsts = 0;
    long holder = 0;
    List<Long> keys = new ArrayList<>();
    for (String line : r.out()) {
      Matcher m = FIELD.matcher(line);
      if (!m.matches()) {
        continue;
      }
      switch (m.group(1)) {
        case "rtype" -> rtype = Integer.parseInt(m.group(2));
        case "rcsts" -> rcsts = Integer.parseInt(m.group(2), 16);
        case "rkey" -> {
          long key = Long.parseUnsignedLong(m.group(2), 16);
          keys.add(key);
          holder = (rcsts & 1) != 0 ? key : holder;
          rcsts = 0;
        }
        default -> { }
      }
    }
    if (rtype == null) {
      throw new FenceException("cannot read the output of nvme resv-report: "
          + (r.out().isEmpty() ? "(no output)" : String.join(" | ", r.out()).strip()));
    }
    return new Status(List.copyOf(keys), rtype == 0 ? Optional.empty()
        : Optional.of(new Reservation(holder, typeName(rtype), rtype == RTYPE)));
  }

  private static String typeName(int rtype) {
    return rtype < TYPES.length ? TYPES[rtype] : "rtype " + rtype;
  }
}
