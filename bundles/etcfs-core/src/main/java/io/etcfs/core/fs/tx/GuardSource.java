package io.etcfs.core.fs.tx;

import io.etcfs.spi.meta.Compare;
import java.util.List;

/**
 * Further guards for a commit, asked for once the transaction's reads and writes are known. The
 * inode-lock layer (issue #4) adds its fencing-token compare here for the inodes a change touches,
 * without any operation changing shape.
 */
@FunctionalInterface
public interface GuardSource {
  List<Compare> guards(MetaTx tx);
}
