package io.etcfs.launcher.cli;

import io.etcfs.launcher.experiment.Cluster;
import io.etcfs.launcher.experiment.Strategy;
import io.etcfs.launcher.node.EtcdConnection;
import java.nio.file.Path;
import java.util.List;

/**
 * A cluster the experiment is given, already mounted: it drives the mounts named, switches live
 * through the etcd named, and never starts or stops the cluster. A node killed by the node-kill
 * workload must run on this machine; it is mounted again from the spec it ran with.
 */
final class ExistingExperimentCluster implements Cluster {
  private final EtcdConnection etcd;
  private final String fsName;
  private final List<Path> mounts;
  private final NodeCycler cycler;

  ExistingExperimentCluster(EtcdConnection etcd, String fsName, List<Path> mounts) {
    this.etcd = etcd;
    this.fsName = fsName;
    this.mounts = List.copyOf(mounts);
    this.cycler = new NodeCycler(this.mounts);
  }

  @Override
  public String describe() {
    return "the existing filesystem '" + fsName + "' (etcd " + etcd.endpoints() + "), driven"
        + " through " + mounts.size() + " mount" + (mounts.size() == 1 ? "" : "s") + ": "
        + String.join(", ", mounts.stream().map(Path::toString).toList());
  }

  @Override
  public List<Path> mounts() {
    return mounts;
  }

  @Override
  public String begin(Strategy s) throws Exception {
    Strategy now = current();
    StringBuilder note = new StringBuilder();
    if (!now.lock().equals(s.lock())) {
      note.append(said("lock", switchLive("lock", s.lock())));
    }
    if (!now.alloc().equals(s.alloc())) {
      note.append(said("alloc", switchLive("alloc", s.alloc())));
    }
    return note.toString();
  }

  private static String said(String kind, Switched w) {
    return "before the run: the " + kind + " was switched live (switch " + w.epoch()
        + ", pause " + w.pauseMillis() + " ms). ";
  }

  @Override
  public void end() {
    // the cluster is not ours: it stays as the last strategy left it
  }

  @Override
  public Strategy current() {
    return LiveSwitch.current(etcd, fsName);
  }

  @Override
  public Switched switchLive(String kind, String to) throws NotLive, Exception {
    return LiveSwitch.ask(etcd, fsName, kind, to);
  }

  @Override
  public boolean canStartFresh() {
    return false;
  }

  @Override
  public void fresh(Strategy s) {
    throw new UnsupportedOperationException("an existing cluster is not replaced");
  }

  @Override
  public void kill(int node) throws Exception {
    cycler.kill(node);
  }

  @Override
  public void restart(int node) throws Exception {
    cycler.restart(node);
  }
}
