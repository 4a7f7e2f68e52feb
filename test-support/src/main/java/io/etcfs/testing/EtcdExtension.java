package io.etcfs.testing;

import io.etcfs.etcd.local.EtcdProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Starts a private etcd from PATH for a test class (one member, or {@link EtcdMembers} members)
 * on free loopback ports with a temporary data directory, and hands tests an {@link EtcdCluster}
 * parameter. Without etcd on PATH the tests fail rather than skip: a skipped etcd test reads as
 * a pass in a CI summary.
 */
public final class EtcdExtension
    implements BeforeAllCallback, AfterAllCallback, ParameterResolver {
  private static final Namespace NAMESPACE = Namespace.create(EtcdExtension.class);

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    int members = context.getRequiredTestClass().isAnnotationPresent(EtcdMembers.class)
        ? context.getRequiredTestClass().getAnnotation(EtcdMembers.class).value()
        : 1;
    Path dataDir = Files.createTempDirectory("etcfs-etcd-");
    EtcdProcess process;
    try {
      process = EtcdProcess.start(dataDir, members);
    } catch (RuntimeException e) {
      deleteTree(dataDir);
      throw e;
    }
    context.getStore(NAMESPACE).put(EtcdCluster.class, new EtcdCluster(process, dataDir));
  }

  @Override
  public void afterAll(ExtensionContext context) {
    EtcdCluster cluster = context.getStore(NAMESPACE).remove(EtcdCluster.class, EtcdCluster.class);
    if (cluster == null) {
      return;
    }
    try {
      cluster.closeStores();
    } finally {
      cluster.process().stop();
      deleteTree(cluster.dataDir());
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == EtcdCluster.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    EtcdCluster cluster = context.getStore(NAMESPACE).get(EtcdCluster.class, EtcdCluster.class);
    if (cluster == null) {
      throw new IllegalStateException("EtcdExtension has no cluster: register it on the class");
    }
    return cluster;
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete the etcd data directory " + root, e);
    }
  }
}
