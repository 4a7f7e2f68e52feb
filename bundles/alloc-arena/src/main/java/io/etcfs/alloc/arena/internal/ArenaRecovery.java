package io.etcfs.alloc.arena.internal;

import io.etcfs.spi.fencing.DeadNode;
import io.etcfs.spi.fencing.Membership;
import io.etcfs.spi.fencing.RecoveryParticipant;
import io.etcfs.spi.meta.MetaStore;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;

/**
 * The allocator's share of recovering a dead node: its arena claims (which have no lease, so that
 * nobody allocates in them while the node might still write) are released once recovery has
 * fenced it. Whoever claims such an arena next rebuilds it from the reverse map.
 */
@Component(
    service = RecoveryParticipant.class,
    configurationPid = ArenaAllocator.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE)
public final class ArenaRecovery implements RecoveryParticipant {
  private static final Logger LOG = System.getLogger(ArenaRecovery.class.getName());
  private final Claims claims;

  @Activate
  public ArenaRecovery(
      @Reference(name = "metaStore") MetaStore store,
      @Reference(name = "membership") Membership membership,
      ArenaAllocator.Config config) {
    this.claims = new Claims(store, new ArenaKeys(config.fsName()), membership);
  }

  @Override
  public String name() {
    return RecoveryParticipant.ALLOCATOR;
  }

  @Override
  public String recover(DeadNode dead) {
    List<Integer> released = claims.releaseDead(dead.node(), dead.generation());
    LOG.log(Level.INFO, "recovery of {0} generation {1}: released arena(s) {2}", dead.node(),
        dead.generation(), released);
    return "arenas released " + (released.isEmpty() ? "none" : released.toString());
  }
}
