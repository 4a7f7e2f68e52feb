package io.etcfs.spi.lock;

import java.util.concurrent.CompletionStage;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The liveness under which a node's inode locks are held (in etcd: a short lease, 2 s by
 * default). When the session ends every lock held under it is gone for the other nodes, so a
 * dead node's files are taken over within one session TTL.
 *
 * <p>A session keeps its own deadline, computed from when it sent the last renewal the store
 * acknowledged; once that deadline passes {@link #isExpired()} is true whatever the renewal
 * stream says, and the node must stop using everything it cached under the session's locks.
 */
@ProviderType
public interface LockSession {
  long id();

  /** True once this node can no longer prove the session alive. Never becomes false again. */
  boolean isExpired();

  /** Completes when the session has expired or was closed. */
  CompletionStage<Void> done();
}
