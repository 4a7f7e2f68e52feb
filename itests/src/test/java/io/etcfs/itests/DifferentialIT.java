package io.etcfs.itests;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same random sequence of operations on an etcfs mount and on a local directory: every
 * operation must succeed or fail alike, and afterwards the two trees must be identical (names,
 * types, modes, link counts, sizes, contents, symlink targets).
 */
@Timeout(600)
class DifferentialIT {
  @TempDir static Path tmp;
  static LocalCluster cluster;

  @BeforeAll
  static void up() throws Exception {
    cluster = LocalCluster.up(tmp, 1, "2G");
  }

  @AfterAll
  static void down() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void randomOperationsLeaveIdenticalTrees(long seed) throws Exception {
    Path etcfs = Files.createDirectory(cluster.mount(1).resolve("seed" + seed));
    Path local = Files.createDirectories(tmp.resolve("local/seed" + seed));
    Random rnd = new Random(seed);
    List<String> log = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      Op op = Op.random(rnd, local);
      String a = op.apply(etcfs);
      String b = op.apply(local);
      log.add(op + " -> " + b);
      assertEquals(b, a, "outcome of step " + i + ": " + op + "\n" + String.join("\n", log));
    }
    assertEquals(snapshot(local), snapshot(etcfs), String.join("\n", log));
  }

  /** One operation on relative paths, chosen from what exists in the reference tree. */
  record Op(String kind, String p, String q, long offset, int length, int seed) {
    static Op random(Random rnd, Path ref) throws IOException {
      List<String> files = new ArrayList<>();
      List<String> dirs = new ArrayList<>(List.of("."));
      try (Stream<Path> s = Files.walk(ref)) {
        s.filter(x -> !x.equals(ref)).forEach(x -> {
          String rel = ref.relativize(x).toString();
          (Files.isDirectory(x, LinkOption.NOFOLLOW_LINKS) ? dirs : files).add(rel);
        });
      }
      String dir = dirs.get(rnd.nextInt(dirs.size()));
      String fresh = dir + "/n" + rnd.nextInt(40);
      String any = rnd.nextInt(4) == 0 || files.isEmpty() ? fresh : files.get(rnd.nextInt(files.size()));
      String other = rnd.nextBoolean() ? dirs.get(rnd.nextInt(dirs.size())) + "/m" + rnd.nextInt(40)
          : (files.isEmpty() ? fresh : files.get(rnd.nextInt(files.size())));
      String[] kinds = {"write", "write", "write", "append", "truncate", "mkdir", "rmdir", "unlink",
          "rename", "rename", "link", "symlink", "chmod"};
      String kind = kinds[rnd.nextInt(kinds.length)];
      List<String> subdirs = dirs.subList(1, dirs.size());
      boolean onDir = kind.equals("rmdir") || kind.equals("rename") && rnd.nextInt(3) == 0;
      String target = onDir && !subdirs.isEmpty() ? subdirs.get(rnd.nextInt(subdirs.size())) : any;
      return new Op(kind, target, other, rnd.nextInt(3) == 0 ? rnd.nextInt(200_000) : rnd.nextInt(9000),
          1 + rnd.nextInt(rnd.nextInt(5) == 0 ? 300_000 : 5000), rnd.nextInt());
    }

    String apply(Path root) {
      Path a = root.resolve(p).normalize();
      Path b = root.resolve(q).normalize();
      try {
        switch (kind) {
          case "write" -> write(a, offset, false);
          case "append" -> write(a, 0, true);
          case "truncate" -> {
            try (FileChannel ch = FileChannel.open(a, StandardOpenOption.WRITE)) {
              ch.truncate(offset);
            }
          }
          case "mkdir" -> Files.createDirectory(a);
          case "rmdir", "unlink" -> Files.delete(a);
          case "rename" -> Files.move(a, b, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
          case "link" -> Files.createLink(b, a);
          case "symlink" -> Files.createSymbolicLink(b, Path.of(p));
          case "chmod" -> Files.setPosixFilePermissions(a,
              PosixFilePermissions.fromString((seed & 1) == 0 ? "rw-r-----" : "rwxr-xr-x"));
          default -> throw new IllegalStateException(kind);
        }
        return "ok";
      } catch (IOException e) {
        return e.getClass().getSimpleName() + (e instanceof java.nio.file.FileSystemException f
            && f.getReason() != null ? ": " + f.getReason() : "");
      }
    }

    private void write(Path f, long at, boolean append) throws IOException {
      byte[] data = new byte[length];
      new Random(seed).nextBytes(data);
      try (FileChannel ch = append
          ? FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.APPEND)
          : FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
        ByteBuffer buf = ByteBuffer.wrap(data);
        long pos = append ? ch.size() : at;
        while (buf.hasRemaining()) {
          pos += ch.write(buf, pos);
        }
      }
    }
  }

  /** Everything a user can tell about a tree, as text, by relative path. */
  static TreeMap<String, String> snapshot(Path root) throws IOException {
    TreeMap<String, String> m = new TreeMap<>();
    try (Stream<Path> s = Files.walk(root)) {
      for (Path x : s.filter(y -> !y.equals(root)).toList()) {
        String rel = root.relativize(x).toString();
        if (Files.isSymbolicLink(x)) {
          m.put(rel, "link -> " + Files.readSymbolicLink(x));
        } else if (Files.isDirectory(x)) {
          m.put(rel, "dir " + PosixFilePermissions.toString(Files.getPosixFilePermissions(x))
              + " nlink " + Files.getAttribute(x, "unix:nlink"));
        } else {
          byte[] content = Files.readAllBytes(x);
          m.put(rel, "file " + PosixFilePermissions.toString(Files.getPosixFilePermissions(x))
              + " nlink " + Files.getAttribute(x, "unix:nlink") + " size " + content.length
              + " sha " + java.util.HexFormat.of().formatHex(sha(content)));
        }
      }
    }
    return m;
  }

  private static byte[] sha(byte[] b) {
    try {
      return java.security.MessageDigest.getInstance("SHA-256").digest(b);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
