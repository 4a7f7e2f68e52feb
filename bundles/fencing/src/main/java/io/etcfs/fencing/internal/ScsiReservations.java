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
 * SCSI-3 persistent reservations through {@code sg_persist} (sg3-utils). Every command runs with
 * {@code --no-inquiry}, so the output holds only the PR IN answer. Keys are given in hex, as
 * {@code sg_persist} reads them.
 */
final class ScsiReservations implements ReservationTool {
  /** SPC-4 PR type 5: Write Exclusive – Registrants Only. */
  static final int PROUT_TYPE = 5;
  static final String TYPE_TEXT = "Write Exclusive, registrants only";
  private static final Pattern KEY_LINE = Pattern.compile("^\\s*0x([0-9a-fA-F]{1,16})\\s*$");
  private static final Pattern HOLDER = Pattern.compile("Key\\s*=\\s*0x([0-9a-fA-F]{1,16})");
  private static final Pattern TYPE = Pattern.compile("type\\s*[:=]\\s*(.+?)\\s*$");

  private final String tool;
  private final String device;

  ScsiReservations(String tool, String device) {
    this.tool = tool;
    this.device = device;
  }

  @Override
  public String device() {
    return device;
  }

  @Override
  public Status status(TimeBudget budget) throws FenceException {
    List<Long> keys = keys(run(budget, "--in", "--read-keys"));
    return new Status(keys, reservation(run(budget, "--in", "--read-reservation")));
  }

  /**
   * REGISTER AND IGNORE EXISTING KEY: succeeds whether or not this path still has an older key of
   * this host registered (a plain REGISTER would then fail with a reservation conflict).
   */
  @Override
  public void register(long key, TimeBudget budget) throws FenceException {
    run(budget, "--out", "--register-ignore", "--param-sark=" + hex(key));
  }

  @Override
  public void reserve(long key, TimeBudget budget) throws FenceException {
    run(budget, "--out", "--reserve", "--param-rk=" + hex(key), "--prout-type=" + PROUT_TYPE);
  }

  @Override
  public void preemptAbort(long ours, long dead, TimeBudget budget) throws FenceException {
    run(budget, "--out", "--preempt-abort", "--param-rk=" + hex(ours), "--param-sark=" + hex(dead),
        "--prout-type=" + PROUT_TYPE);
  }

  /** REGISTER with a service action key of 0 is how SPC spells "unregister". */
  @Override
  public void unregister(long key, TimeBudget budget) throws FenceException {
    run(budget, "--out", "--register", "--param-rk=" + hex(key), "--param-sark=0");
  }

  private List<String> run(TimeBudget budget, String... args) throws FenceException {
    List<String> argv = new ArrayList<>();
    argv.add(tool);
    argv.add("--no-inquiry");
    argv.addAll(List.of(args));
    argv.add(device);
    String label = String.join(" ", argv);
    CommandRunner.Result r = CommandRunner.run(label, argv, Map.of(), budget,
        tool + " not found: install sg3-utils");
    if (r.exit() != 0) {
      throw new FenceException(label + " failed with status " + r.exit() + ": " + r.lastErrLine());
    }
    return r.out();
  }

  /** Parses {@code sg_persist --read-keys}: a header line, then one {@code 0x…} key per line. */
  static List<Long> keys(List<String> out) throws FenceException {
    List<Long> keys = new ArrayList<>();
    boolean listed = false;
    for (String line : out) {
      if (line.contains("there are NO registered reservation keys")) {
        return List.of();
      }
      Matcher m = KEY_LINE.matcher(line);
      if (line.matches(".*registered reservation keys? follows?:\\s*")) {
        listed = true;
      } else if (listed && m.matches()) {
        keys.add(Long.parseUnsignedLong(m.group(1), 16));
      }
    }
    if (!listed) {
      throw unexpected("--read-keys", out);
    }
    return List.copyOf(keys);
  }

  /** Parses {@code sg_persist --read-reservation}: {@code Key=0x…} and {@code type: …}. */
  static Optional<Reservation> reservation(List<String> out) throws FenceException {
    Long key = null;
    String type = null;
    for (String line : out) {
      if (line.contains("there is NO reservation held")) {
        return Optional.empty();
      }
      Matcher k = HOLDER.matcher(line);
      Matcher t = TYPE.matcher(line);
      if (k.find()) {
        key = Long.parseUnsignedLong(k.group(1), 16);
      }
      if (t.find()) {
        type = t.group(1);
      }
    }
    if (key == null || type == null) {
      throw unexpected("--read-reservation", out);
    }
    return Optional.of(new Reservation(key, type, type.equalsIgnoreCase(TYPE_TEXT)));
  }

  private static FenceException unexpected(String what, List<String> out) {
    return new FenceException("cannot read the output of sg_persist " + what + ": "
        + (out.isEmpty() ? "(no output)" : String.join(" | ", out).strip()));
  }
}
