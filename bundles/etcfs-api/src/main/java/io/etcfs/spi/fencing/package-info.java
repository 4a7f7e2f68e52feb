/**
 * The membership and fencing SPI: this node's incarnation in the cluster (its
 * generation, which guards every metadata commit) and the agents that fence a dead node. 1.2:
 * the names of the recovery parts ({@link RecoveryParticipant#FILESYSTEM}, {@link
 * RecoveryParticipant#ALLOCATOR}).
 */
@Export
@Version("1.2.0")
package io.etcfs.spi.fencing;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
