package io.etcfs.core.format;

import io.etcfs.core.device.FileBlockDevice;
import io.etcfs.core.fs.meta.FsKeys;
import io.etcfs.spi.fs.FsRecord;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.MetaStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The checks made before a node mounts: the filesystem record exists in etcd, and the device's
 * superblock carries the same UUID. Two clusters pointed at one device must never both write it.
 */
public final class FilesystemCheck {
  private FilesystemCheck() {}

  /**
   * Reads the filesystem record and the device's superblock and checks they belong together.
   *
   * @throws FormatException with a one-line reason if they do not
   */
  public static FsRecord verify(MetaStore store, String fsName, Path device)
      throws IOException, FormatException {
    FsRecord record = record(store, fsName).orElseThrow(() -> new FormatException(
        "no filesystem '" + fsName + "' in etcd at " + store.describe()
            + " (run 'etcfs format' first)"));
    Superblock onDevice = readSuperblock(device);
    if (!onDevice.uuid().equals(record.uuid())) {
      throw new FormatException(
          "device " + device + " belongs to filesystem " + onDevice.uuid() + " ('"
              + onDevice.name() + "'), not to '" + fsName + "' (" + record.uuid()
              + ") in etcd: refusing to mount");
    }
    return record;
  }

  /**
   * The filesystem record, if there is one.
   *
   * @throws FormatException with a one-line reason naming the key if it does not decode
   */
  public static Optional<FsRecord> record(MetaStore store, String fsName) throws FormatException {
    Optional<KeyValue> kv = store.get(new FsKeys(fsName).record());
    if (kv.isEmpty()) {
      return Optional.empty();
    }
    try {
      return Optional.of(FsRecord.decode(kv.get().value()));
    } catch (IllegalArgumentException e) {
      throw new FormatException("filesystem '" + fsName + "': " + e.getMessage()
          + " (key " + kv.get().keyString() + ")");
    }
  }

  /** Reads the superblock of a device, failing with one line if it holds none. */
  public static Superblock readSuperblock(Path device) throws IOException, FormatException {
    if (!Files.exists(device)) {
      throw new FormatException("device " + device + " does not exist");
    }
    ByteBuffer head = ByteBuffer.allocate(Superblock.SIZE);
    long size;
    try (FileBlockDevice d = FileBlockDevice.openReadOnly(device)) {
      d.read(head, 0);
      size = d.size();
    }
    head.flip();
    Superblock sb;
    try {
      sb = Superblock.decode(head);
    } catch (IllegalArgumentException e) {
      throw new FormatException("device " + device + " holds no etcfs filesystem: " + e.getMessage());
    }
    if (size < sb.deviceSize()) {
      throw new FormatException("device " + device + " is truncated: " + size
          + " bytes, its superblock says " + sb.deviceSize());
    }
    return sb;
  }
}
