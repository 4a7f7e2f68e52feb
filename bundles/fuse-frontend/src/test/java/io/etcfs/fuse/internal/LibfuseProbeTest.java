package io.etcfs.fuse.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class LibfuseProbeTest {

  @Test
  void bindsLibfuse2WhereItIsInstalled() {
    assumeTrue(libfuse2Installed(), "libfuse2 is not installed on this machine");
    assertDoesNotThrow(LibfuseProbe::check);
  }

  @Test
  void aMissingLibraryIsOneLineNamingThePackage() {
    IllegalStateException e =
        assertThrows(IllegalStateException.class,
            () -> LibfuseProbe.openLibfuse("libetcfs-no-such-library.so.2"));
    assertTrue(e.getMessage().startsWith(LibfuseProbe.MISSING), e.getMessage());
    assertTrue(e.getMessage().lines().count() == 1, e.getMessage());
  }

  private static boolean libfuse2Installed() {
    return Stream.of("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
            "/lib", "/usr/lib", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu")
        .anyMatch(dir -> Files.exists(Path.of(dir, LibfuseProbe.LIBRARY)));
  }
}
