package io.etcfs.core.fs;

import io.etcfs.core.fs.meta.Codec;
import io.etcfs.core.fs.meta.FileExtent;
import io.etcfs.core.fs.meta.Inode;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.vfs.Errno;
import io.etcfs.spi.vfs.FsException;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.logging.Logger;

/** Decodes stored values; a value that does not decode is EIO and one log line naming its key. */
final class Records {
  private static final Logger LOG = Logger.getLogger(Records.class.getName());

  private Records() {}

  static Inode inode(Optional<KeyValue> kv, long ino) throws FsException {
    if (kv.isEmpty()) {
      throw new FsException(Errno.ENOENT, "no inode " + ino);
    }
    return decode(kv.get(), Codec::decodeInode);
  }

  static Codec.Dirent dirent(KeyValue kv) throws FsException {
    return decode(kv, Codec::decodeDirent);
  }

  static Codec.DirTimes dirTimes(KeyValue kv) throws FsException {
    return decode(kv, Codec::decodeDirTimes);
  }

  static List<FileExtent> extents(KeyValue kv) throws FsException {
    return decode(kv, Codec::decodeExtents);
  }

  static <T> T decode(KeyValue kv, Function<byte[], T> decoder) throws FsException {
    try {
      return decoder.apply(kv.value());
    } catch (IllegalArgumentException e) {
      LOG.severe("undecodable metadata at key " + kv.keyString() + ": " + e.getMessage());
      throw new FsException(Errno.EIO, "undecodable key " + kv.keyString(), e);
    }
  }
}
