package io.etcfs.core.device;

import io.etcfs.spi.blockdev.BlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A block device backed by a device node or an image file, with positional I/O on one channel
 * (FileChannel's positional read and write are safe from many threads at once).
 *
 * <p>A block device node is opened with O_DIRECT. The device is shared with other machines, and
 * this machine's page cache knows nothing of their writes: a block another node wrote after this
 * one last read it would be served stale from the cache — old data, or a previous file's bytes.
 * O_DIRECT needs aligned offsets, lengths and memory, so direct I/O goes through an aligned bounce
 * buffer per thread (a copy, cheap next to a device round trip). An image file is one file on one
 * machine, whose page cache every local node shares, so it keeps plain buffered I/O.
 */
public final class FileBlockDevice implements BlockDevice {
  /** Alignment of direct I/O: covers devices with 512-byte and 4 KiB logical sectors. */
  static final int ALIGN = 4096;
  private static final int BOUNCE = 1 << 20;
  private static final int S_IFMT = 0170000;
  private static final int S_IFBLK = 0060000;

  private static final java.util.logging.Logger LOG =
      java.util.logging.Logger.getLogger(FileBlockDevice.class.getName());

  /**
   * Replaced when an interrupt closed it: a FileChannel closes itself for every thread when one
   * thread is interrupted in its I/O (a plug-in stopping its threads with {@code shutdownNow}
   * while one of them commits a recalled file's data), and the node would lose its device.
   */
  private volatile FileChannel channel;
  private final Path path;
  private final OpenOption[] options;
  private volatile boolean closed;
  private final long size;
  private final boolean direct;
  private final ThreadLocal<ByteBuffer> bounce;

  private FileBlockDevice(Path path, OpenOption[] options, FileChannel channel, long size,
      boolean direct) {
    this.path = path;
    this.options = options;
    this.channel = channel;
    this.size = size;
    this.direct = direct;
    this.bounce = ThreadLocal.withInitial(
        () -> ByteBuffer.allocateDirect(BOUNCE + ALIGN).alignedSlice(ALIGN).slice(0, BOUNCE));
  }

  /** Opens an existing device or image for reading and writing. */
  public static FileBlockDevice open(Path path) throws IOException {
    return open(path, isBlockDevice(path), false);
  }

  /** Opens a device or image read-only. */
  public static FileBlockDevice openReadOnly(Path path) throws IOException {
    return open(path, isBlockDevice(path), true);
  }

  /** For tests: direct I/O on a regular file (ext4 and xfs offer it; tmpfs does not). */
  static FileBlockDevice open(Path path, boolean direct, boolean readOnly) throws IOException {
    List<OpenOption> options = new ArrayList<>(List.of(StandardOpenOption.READ));
    if (!readOnly) {
      options.add(StandardOpenOption.WRITE);
    }
    if (direct) {
      options.add(com.sun.nio.file.ExtendedOpenOption.DIRECT);
    }
    OpenOption[] opts = options.toArray(new OpenOption[0]);
    FileChannel ch = FileChannel.open(path, opts);
    return new FileBlockDevice(path, opts, ch, sizeOf(ch), direct);
  }

  /** One call on the channel. */
  private interface Io {
    long on(FileChannel ch) throws IOException;
  }

  /**
   * Runs {@code op} on the channel, uninterruptibly: if an interrupt of this or another thread
   * closed the channel meanwhile, it is opened again and {@code op} runs again (a positional
   * read or write of the same bytes, which may repeat), and this thread's interrupt is kept for
   * its caller. Only {@link #close} ends the device.
   */
  private long io(Io op) throws IOException {
    boolean interrupted = false;
    try {
      while (true) {
        FileChannel ch = channel;
        try {
          return op.on(ch);
        } catch (java.nio.channels.ClosedChannelException e) {
          if (closed) {
            throw e;
          }
          interrupted |= Thread.interrupted();
          reopen(ch, e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private synchronized void reopen(FileChannel broken, IOException why) throws IOException {
    if (channel == broken && !closed) {
      channel = FileChannel.open(path, options);
      LOG.warning("device " + path + " opened again: an interrupt closed its channel (" + why
          + ")");
    }
  }

  private static boolean isBlockDevice(Path path) throws IOException {
    Object mode = Files.getAttribute(path, "unix:mode");
    return mode instanceof Integer m && (m & S_IFMT) == S_IFBLK;
  }

  /**
   * The size of a block device node is not its channel size (0 for /dev nodes on some kernels),
   * so seek to the end, which works for both nodes and files.
   */
  private static long sizeOf(FileChannel ch) throws IOException {
    long s = ch.size();
    return s > 0 ? s : ch.position(0).size();
  }

  /** Whether I/O bypasses this machine's page cache. */
  public boolean direct() {
    return direct;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public int read(ByteBuffer dst, long offset) throws IOException {
    if (direct) {
      return readDirect(dst, offset);
    }
    int total = 0;
    while (dst.hasRemaining()) {
      long at = offset + total;
      int n = (int) io(ch -> ch.read(dst, at));
      if (n < 0) {
        break;
      }
      total += n;
    }
    return total;
  }

  @Override
  public void write(ByteBuffer src, long offset) throws IOException {
    if (direct) {
      writeDirect(src, offset);
      return;
    }
    long pos = offset;
    while (src.hasRemaining()) {
      long at = pos;
      pos += io(ch -> ch.write(src, at));
    }
  }

  /** Reads aligned pieces into the bounce buffer and copies out the part asked for. */
  private int readDirect(ByteBuffer dst, long offset) throws IOException {
    ByteBuffer b = bounce.get();
    int total = 0;
    while (dst.hasRemaining() && offset + total < size) {
      long at = offset + total;
      long from = at & -ALIGN;
      int skip = (int) (at - from);
      int want = (int) Math.min(dst.remaining(), BOUNCE - skip);
      int span = roundUp(skip + want);
      int got = fill(b, from, span);
      int useful = Math.min(want, got - skip);
      if (useful <= 0) {
        break;
      }
      dst.put(b.duplicate().clear().limit(skip + useful).position(skip));
      total += useful;
    }
    return total;
  }

  /**
   * Writes through the bounce buffer. Whole aligned blocks (everything the filesystem writes)
   * go straight out; a partial block at either edge is read first and merged (read-modify-write).
   */
  private void writeDirect(ByteBuffer src, long offset) throws IOException {
    ByteBuffer b = bounce.get();
    while (src.hasRemaining()) {
      long from = offset & -ALIGN;
      int skip = (int) (offset - from);
      int len = Math.min(src.remaining(), BOUNCE - skip);
      int span = roundUp(skip + len);
      if (skip != 0) {
        fill(b, from, ALIGN);
      }
      if ((skip + len) % ALIGN != 0 && (span > ALIGN || skip == 0)) {
        ByteBuffer tail = b.duplicate().clear().limit(span).position(span - ALIGN).slice();
        fillInto(tail, from + span - ALIGN);
      }
      b.clear();
      b.position(skip);
      ByteBuffer piece = src.duplicate();
      piece.limit(piece.position() + len);
      b.put(piece);
      src.position(src.position() + len);
      b.position(0).limit(span);
      long pos = from;
      while (b.hasRemaining()) {
        long at = pos;
        pos += io(ch -> ch.write(b, at));
      }
      offset += len;
    }
  }

  private int fill(ByteBuffer b, long from, int span) throws IOException {
    b.clear().limit(span);
    return fillInto(b, from);
  }

  private int fillInto(ByteBuffer b, long from) throws IOException {
    int got = 0;
    while (b.hasRemaining()) {
      long at = from + got;
      int n = (int) io(ch -> ch.read(b, at));
      if (n <= 0) {
        break;
      }
      got += n;
    }
    return got;
  }

  private static int roundUp(int n) {
    return (n + ALIGN - 1) & -ALIGN;
  }

  @Override
  public void flush() throws IOException {
    io(ch -> {
      ch.force(false);
      return 0;
    });
  }

  @Override
  public void close() throws IOException {
    closed = true;
    channel.close();
  }
}
