package io.etcfs.core.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "etcfs core", description = "The filesystem on one node")
@interface CoreConfig {
  @AttributeDefinition(description = "The filesystem's name (its etcd prefix)")
  String fsName();

  @AttributeDefinition(description = "This node's name")
  String nodeName();

  @AttributeDefinition(description = "The shared device (block device node or image file)")
  String device();

  @AttributeDefinition(description = "Where this node mounts the filesystem (for shell paths)")
  String mountpoint() default "";

  @AttributeDefinition(description = "Filter choosing the lock backend")
  String lockService_target() default "(etcfs.backend=etcd)";

  @AttributeDefinition(description = "Filter choosing the allocator backend")
  String allocator_target() default "(etcfs.backend=arena)";

  @AttributeDefinition(description = "How long F_SETLKW and a blocking flock wait at most for a"
      + " lock held elsewhere before the caller sees ENOLCK; a signal ends the wait at once")
  int lockWaitSeconds() default 30;
}
