package io.etcfs.fuse.internal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * libfuse's command line for one mount. What each option is for (measured, see
 * docs/ARCHITECTURE.md, "The FUSE front end"): big_writes + max_write=131072 make each write callback 128 KiB
 * (libfuse 2's ceiling) instead of 4 KiB; default_permissions makes the kernel check permission
 * bits (libfuse 2 checks none); allow_other lets every user in; use_ino keeps inode numbers (hard
 * links); auto_unmount has fusermount remove the mount when the JVM dies; no hard_remove, so
 * libfuse keeps a path for a file unlinked while open and its fstat works (see HiddenNames);
 * atomic_o_trunc hands
 * O_TRUNC to open as the Vfs expects. The kernel's attribute and entry caches are off by default:
 * other nodes change inodes, and jnr-fuse cannot invalidate the kernel's copy.
 */
record MountOptions(
    String fsName, Path mountpoint, boolean singleThreaded, double attrTimeoutSeconds,
    double entryTimeoutSeconds, Duration mountTimeout, Duration unmountTimeout) {
  static final int MAX_WRITE = 128 * 1024;

  /** The arguments after argv[0], the mountpoint excepted. */
  List<String> arguments() {
    List<String> args = new ArrayList<>(List.of("-f")); // foreground: never fork the JVM
    if (singleThreaded) {
      args.add("-s");
    }
    args.add("-o");
    args.add(String.join(",",
        "fsname=" + escape("etcfs:" + fsName),
        "subtype=" + EtcfsFuse.TYPE,
        "big_writes",
        "max_write=" + MAX_WRITE,
        "default_permissions",
        "allow_other",
        "use_ino",
        "auto_unmount",
        "atomic_o_trunc",
        "attr_timeout=" + attrTimeoutSeconds,
        "entry_timeout=" + entryTimeoutSeconds,
        "negative_timeout=" + entryTimeoutSeconds));
    return args;
  }

  /** libfuse's option parser splits at commas; a backslash escapes one. */
  static String escape(String value) {
    return value.replace("\\", "\\\\").replace(",", "\\,");
  }
}
