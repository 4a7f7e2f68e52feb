package io.etcfs.launcher.cli;

import io.etcfs.launcher.UserError;
import io.etcfs.launcher.experiment.Cluster;
import io.etcfs.launcher.experiment.Experiment;
import io.etcfs.launcher.experiment.Spec;
import io.etcfs.launcher.experiment.SpecException;
import io.etcfs.launcher.experiment.Strategy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

@Command(name = "experiment", mixinStandardHelpOptions = true,
    description = {"Compare lock backends and allocators under one workload, switching live.",
        "Runs the workload of SPEC (key = value lines: workload, strategies, nodes, active, runs,"
            + " phase, sample, record, size; see docs/ARCHITECTURE.md) under each strategy in"
            + " turn, switching the cluster live between them while the workload runs, and"
            + " writes report.md, raw.json, throughput.png and scaling.png into --out.",
        "Without --etcd it starts a local cluster for each run (in OUT/cluster); with --etcd"
            + " and --mounts it drives an existing, mounted cluster and never stops it."})
final class ExperimentCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "SPEC", description = "The experiment's spec file.")
  Path specFile;

  @Option(names = "--out", paramLabel = "DIR", defaultValue = "etcfs-experiment",
      description = "Where the report, raw JSON and plots go (default: ${DEFAULT-VALUE}).")
  Path out;

  @Option(names = "--runs", paramLabel = "N", description = "Runs, instead of the spec's.")
  Integer runs;

  @Mixin EtcdOptions etcd;

  @Option(names = "--name", paramLabel = "FS",
      description = "With --etcd: the filesystem's name (default: etcfs).")
  String name;

  @Option(names = "--device", paramLabel = "PATH",
      description = "With --etcd: the filesystem's device, checked against its record.")
  Path device;

  @Option(names = "--mounts", paramLabel = "MOUNTPOINT", split = ",",
      description = "With --etcd: the mounts to drive, one per node (comma-separated).")
  List<Path> mounts;

  @picocli.CommandLine.Spec CommandSpec command;

  @Override
  public Integer call() throws Exception {
    Spec spec = spec();
    Cluster cluster;
    if (etcd.endpoints != null || mounts != null || device != null || name != null) {
      spec = existing(spec);
      cluster = new ExistingExperimentCluster(etcd.connection(), fsName(), mounts);
    } else {
      Path dir = out.toAbsolutePath().normalize().resolve("cluster");
      LocalExperimentCluster local = new LocalExperimentCluster(dir, spec.nodes(), spec.size(),
          out.toAbsolutePath().normalize().resolve("cluster.log"));
      // Ctrl-C: the cluster this command started is stopped, not left running
      Runtime.getRuntime().addShutdownHook(new Thread(local::stopQuietly, "experiment-down"));
      cluster = local;
    }
    System.setProperty("java.awt.headless", "true");
    List<String> words = new ArrayList<>(List.of("etcfs"));
    words.addAll(command.commandLine().getParseResult().originalArgs());
    Experiment e = new Experiment(spec, cluster, out.toAbsolutePath().normalize(), System.err);
    e.run(String.join(" ", words));
    System.out.println("report: " + out.resolve("report.md"));
    System.out.println("raw:    " + out.resolve("raw.json"));
    System.out.println("plots:  " + out.resolve("throughput.png") + ", "
        + out.resolve("scaling.png"));
    return 0;
  }

  /** The spec, with every backend it names known and installed: bad usage otherwise. */
  private Spec spec() {
    Spec spec;
    try {
      spec = Spec.read(specFile);
    } catch (SpecException e) {
      throw new ParameterException(command.commandLine(), e.getMessage());
    }
    if (runs != null) {
      if (runs < 1) {
        throw new ParameterException(command.commandLine(), "--runs must be 1 at least");
      }
      spec = spec.withRuns(runs);
    }
    Path bundles = Home.dir().resolve("bundle");
    for (Strategy s : spec.strategies()) {
      try {
        Backends.lock(s.lock(), bundles);
        Backends.alloc(s.alloc(), bundles);
      } catch (UserError e) {
        throw new ParameterException(command.commandLine(), specFile + ": " + s + ": "
            + e.getMessage());
      }
    }
    if (Files.exists(out) && !Files.isDirectory(out)) {
      throw new ParameterException(command.commandLine(), "--out " + out
          + " is not a directory");
    }
    return spec;
  }

  /** The checks of an existing cluster, before anything is switched or written. */
  private Spec existing(Spec spec) throws Exception {
    if (etcd.endpoints == null) {
      throw new ParameterException(command.commandLine(),
          "--mounts, --device and --name are for an existing cluster: give --etcd URLS too");
    }
    if (mounts == null || mounts.isEmpty()) {
      throw new ParameterException(command.commandLine(),
          "an existing cluster needs --mounts: the mountpoints of the nodes to drive");
    }
    List<Path> abs = new ArrayList<>();
    for (Path m : mounts) {
      Path a = m.toAbsolutePath().normalize();
      if (!Mounts.ETCFS_TYPE.equals(Mounts.fsType(a))) {
        throw new ParameterException(command.commandLine(), a + " is not an etcfs mount");
      }
      if (abs.contains(a)) {
        throw new ParameterException(command.commandLine(), a + " is given twice in --mounts");
      }
      abs.add(a);
    }
    mounts = abs;
    if (spec.nodes() > mounts.size()) {
      throw new ParameterException(command.commandLine(), specFile + " drives " + spec.nodes()
          + " nodes; --mounts names " + mounts.size());
    }
    mounts = mounts.subList(0, spec.nodes());
    if (device != null) {
      try (var store = etcd.connect()) {
        io.etcfs.core.format.FilesystemCheck.verify(store, fsName(), device);
      } catch (io.etcfs.core.format.FormatException e) {
        throw new UserError(e.getMessage());
      }
    }
    return spec;
  }

  private String fsName() {
    return name != null ? name : "etcfs";
  }
}
