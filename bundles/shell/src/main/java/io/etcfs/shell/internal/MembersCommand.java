package io.etcfs.shell.internal;

import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.MetaStore;
import io.etcfs.spi.meta.RangeResult;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.Designate;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The Gogo command {@code etcfs:members}: the cluster's live members as etcd sees them. Gogo
 * calls public methods of any service registered with {@code osgi.command.*} properties and
 * prints what they return, so this bundle needs nothing of Gogo's API.
 */
@Component(
    service = MembersCommand.class,
    configurationPid = MembersCommand.PID,
    configurationPolicy = ConfigurationPolicy.REQUIRE,
    property = {"osgi.command.scope=etcfs", "osgi.command.function=members"})
@Designate(ocd = MembersCommand.Config.class)
public final class MembersCommand {
  static final String PID = "io.etcfs.shell";

  @ObjectClassDefinition(
      name = "etcfs shell commands",
      description = "Gogo commands that show this filesystem's cluster state.")
  @interface Config {
    @AttributeDefinition(description = "The filesystem's name: the first element of its keys.")
    String fsName();
  }

  private final MetaStore store;
  private final String fsName;

  @Activate
  public MembersCommand(@Reference(name = "metaStore") MetaStore store, Config config) {
    this.store = store;
    if (config.fsName() == null || config.fsName().isBlank()) {
      throw new IllegalArgumentException(PID + ": fsName is not set");
    }
    this.fsName = config.fsName();
  }

  /** Lists the members: name, generation, host, pid, mountpoint and membership lease. */
  public String members() {
    String prefix = "/etcfs/" + fsName + "/members/";
    RangeResult members = store.prefix(Keys.of(prefix), 0);
    if (members.kvs().isEmpty()) {
      return "no members of " + fsName + " (revision " + members.revision() + ")";
    }
    return MemberTable.format(MemberTable.rows(prefix, members.kvs()));
  }
}
