package io.etcfs.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.etcfs.etcd.client.EtcdMetaStore;
import io.etcfs.spi.meta.Keys;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.Txn;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/** A three-member cluster keeps serving while one member is down, and takes it back. */
@ExtendWith(EtcdExtension.class)
@EtcdMembers(3)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EtcdExtensionTest {

  @Test
  void threeMembersSurviveTheLossOfOne(EtcdCluster etcd) {
    assertEquals(3, etcd.process().clientUrls().size());
    assertEquals(3, etcd.process().pids().size());
    assertTrue(Files.exists(etcd.dataDir().resolve("etcd2.pid")));
    EtcdMetaStore store = etcd.newStore();
    store.commit(new Txn().then(Op.put(Keys.of("/ext/a"), Keys.of("1"))));

    etcd.process().stopMember(0);
    assertEquals(2, etcd.process().pids().size());
    store.commit(new Txn().then(Op.put(Keys.of("/ext/a"), Keys.of("2"))));
    assertEquals("2", store.get(Keys.of("/ext/a")).orElseThrow().valueString());

    etcd.process().startMember(0);
    etcd.process().awaitHealthy();
    assertEquals(3, etcd.process().pids().size());
    assertEquals("2", store.get(Keys.of("/ext/a")).orElseThrow().valueString());
  }
}
