package io.etcfs.core.format;

import io.etcfs.core.device.FileBlockDevice;
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
    Optional<KeyValue> kv = store.get(new FsKeys(fsName).record());
    if (kv.isEmpty()) {
      throw new FormatException(
          "no filesystem '" + fsName + "' in etcd at " + store.describe()
              + " (run 'etcfs format' first)");
    }
    FsRecord record = FsRecord.decode(kv.get().value());
    Superblock onDevice = readSuperblock(device);
    if (!onDevice.uuid().equals(record.superblock().uuid())) {
      throw new FormatException(
          "device " + device + " belongs to filesystem " + onDevice.uuid() + " ('"
              + onDevice.name() + "'), not to '" + fsName + "' (" + record.superblock().uuid()
              + ") in etcd: refusing to mount");
    }
    return record;
  }

  /** Reads the superblock of a device, failing with one line if it holds none. */
  public static Superblock readSuperblock(Path device) throws IOException, FormatException {
    if (!Files.exists(device)) {
      throw new FormatException("device " + device + " does not exist");
    }
    ByteBuffer head = ByteBuffer.allocate(Superblock.SIZE);
    try (FileBlockDevice d = FileBlockDevice.openReadOnly(device)) {
      d.read(head, 0);
    }
    head.flip();
    try {
      return Superblock.decode(head);
    } catch (IllegalArgumentException e) {
      throw new FormatException("device " + device + " holds no etcfs filesystem: " + e.getMessage());
    }
  }
}
