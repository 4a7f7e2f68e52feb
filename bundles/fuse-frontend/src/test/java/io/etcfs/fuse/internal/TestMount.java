package io.etcfs.fuse.internal;

import io.etcfs.fuse.common.Fusermount;
import io.etcfs.fuse.common.MountInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A real FUSE mount of a Vfs in a fresh temporary directory. Closing always unmounts: through the
 * front end, then fusermount -u, then -uz, each bounded, so a failed test leaves no mount behind.
 */
final class TestMount implements AutoCloseable {
  final Path dir;
  final MemoryVfs vfs;
  final EtcfsFuse fuse;
  final FuseMount mount;

  private TestMount(Path dir, MemoryVfs vfs, EtcfsFuse fuse) {
    this.dir = dir;
    this.vfs = vfs;
    this.fuse = fuse;
    this.mount = FuseMount.mount(fuse, options(dir));
  }

  static TestMount start(MemoryVfs vfs, boolean directIo) throws IOException {
    Path dir = Files.createTempDirectory("etcfs-fuse-test");
    return new TestMount(dir, vfs, new EtcfsFuse(vfs, directIo, true));
  }

  static FuseMount mount(MemoryVfs vfs, Path dir, boolean directIo) {
    return FuseMount.mount(new EtcfsFuse(vfs, directIo, true), options(dir));
  }

  static MountOptions options(Path dir) {
    return new MountOptions("test", dir, false, 0, 0, Duration.ofSeconds(10),
        Duration.ofSeconds(6));
  }

  Path path(String name) {
    return dir.resolve(name);
  }

  @Override
  public void close() throws IOException {
    try {
      mount.close();
    } finally {
      forceUnmount(dir);
      Files.deleteIfExists(dir);
    }
  }

  static void forceUnmount(Path dir) {
    if (MountInfo.at(dir.toAbsolutePath()).isPresent()) {
      if (!Fusermount.run(5_000, "-u", dir.toString())) {
        Fusermount.run(5_000, "-uz", dir.toString());
      }
    }
  }
}
