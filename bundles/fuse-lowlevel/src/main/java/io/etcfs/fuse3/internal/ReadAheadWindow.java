package io.etcfs.fuse3.internal;

import io.etcfs.fuse.common.MountInfo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The kernel's read-ahead window for one mount: {@code /sys/class/bdi/<major:minor>/read_ahead_kb}
 * of the mount's device. FUSE starts every mount at the kernel's default of 128 KiB and its INIT
 * reply can only lower that, so a sequential read of a cold file reaches etcfs in 128 KiB requests
 * however large the reader's own reads are (measured: 4,096 requests for 512 MiB read with 1 MiB
 * {@code read(2)}s). A window of a megabyte makes those requests 1 MiB, which libfuse 3's
 * max_write-derived max_pages allows, and costs nothing for random reads: the kernel grows the
 * window only for a reader it sees reading sequentially.
 *
 * <p>Set once the kernel has taken libfuse's INIT reply, which would clamp an earlier value back
 * down: the session runs {@link #applier} after it answered its first request, which is always
 * INIT (the kernel sends nothing else before), and whose reply the kernel applies while the
 * answering write runs. Never by asking the mount itself: a request this process makes to its
 * own mount, read by one of its threads and then left unanswered because the node stops, blocks
 * that thread in the kernel for good, and with it the process's exit and the unmount. Only root
 * may write there; anywhere else the window stays the kernel's and one line in
 * the log says so. Nothing here is needed for correctness: pages read ahead are cached under the
 * inode lock like any others (docs/ARCHITECTURE.md, "Kernel caches").
 */
final class ReadAheadWindow {
  private static final Logger LOG = Logger.getLogger(ReadAheadWindow.class.getName());
  static final Path SYSFS = Path.of("/sys/class/bdi");

  private ReadAheadWindow() {}

  /**
   * What sets the window once INIT is done: runs at most once, on a daemon thread of its own (a
   * reader of the device must not wait for sysfs), reading only {@code /proc/self/mountinfo}
   * and sysfs. 0 KiB does nothing.
   */
  static Runnable applier(Path mountpoint, int kib) {
    AtomicBoolean done = new AtomicBoolean(kib <= 0);
    return () -> {
      if (done.getAndSet(true)) {
        return;
      }
      Thread t = new Thread(() -> {
        try {
          Optional<MountInfo> info = MountInfo.at(mountpoint);
          if (info.isEmpty()) {
            return; // unmounted meanwhile
          }
          apply(SYSFS, info.get().device(), kib, mountpoint);
        } catch (IOException | RuntimeException e) {
          LOG.log(Level.INFO, "read-ahead of {0} left at the kernel''s default: {1}",
              new Object[] {mountpoint, e.toString()});
        }
      }, "etcfs-fuse3 read-ahead " + mountpoint);
      t.setDaemon(true);
      t.start();
    };
  }

  /**
   * Writes the window of the mount whose device is {@code device} ("major:minor"); fails as the
   * write does (not root, no such bdi), having changed nothing.
   */
  static void apply(Path sysfs, String device, int kib, Path mountpoint) throws IOException {
    if (!device.matches("\\d+:\\d+")) {
      throw new IOException("not a device number: '" + device + "'");
    }
    Path file = sysfs.resolve(device).resolve("read_ahead_kb");
    // never CREATE: the attribute exists for every mounted bdi, or this is not one
    Files.writeString(file, Integer.toString(kib), StandardCharsets.US_ASCII,
        StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
    LOG.log(Level.INFO, "read-ahead of {0}: {1} KiB ({2})",
        new Object[] {mountpoint, Files.readString(file).trim(), file});
  }
}
