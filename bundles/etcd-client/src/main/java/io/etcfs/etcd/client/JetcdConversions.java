package io.etcfs.etcd.client;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.watch.WatchEvent.EventType;
import io.etcfs.spi.meta.Compare;
import io.etcfs.spi.meta.KeyValue;
import io.etcfs.spi.meta.Op;
import io.etcfs.spi.meta.WatchEvent;
import java.util.List;

/** Translation between the SPI's records and jetcd's types; nothing here talks to etcd. */
final class JetcdConversions {
  /** etcd's range end meaning "every key from the start key on". */
  private static final ByteSequence TO_THE_END = ByteSequence.from(new byte[] {0});

  private JetcdConversions() {}

  static ByteSequence bytes(byte[] b) {
    return ByteSequence.from(b);
  }

  /** An empty range end in the SPI means "no end"; etcd spells that as a single zero byte. */
  static ByteSequence rangeEnd(byte[] to) {
    return to.length == 0 ? TO_THE_END : bytes(to);
  }

  static KeyValue keyValue(io.etcd.jetcd.KeyValue kv) {
    return new KeyValue(
        kv.getKey().getBytes(),
        kv.getValue().getBytes(),
        kv.getCreateRevision(),
        kv.getModRevision(),
        kv.getVersion(),
        kv.getLease());
  }

  static List<KeyValue> keyValues(List<io.etcd.jetcd.KeyValue> kvs) {
    return kvs.stream().map(JetcdConversions::keyValue).toList();
  }

  static Cmp[] compares(List<Compare> compares) {
    return compares.stream().map(JetcdConversions::compare).toArray(Cmp[]::new);
  }

  private static Cmp compare(Compare c) {
    CmpTarget<?> target = switch (c.target()) {
      case CREATE_REVISION, CREATE_REVISION_LESS, CREATE_REVISION_GREATER ->
          CmpTarget.createRevision(c.expected());
      case MOD_REVISION, MOD_REVISION_LESS, MOD_REVISION_GREATER ->
          CmpTarget.modRevision(c.expected());
      case VERSION -> CmpTarget.version(c.expected());
      case VALUE, VALUE_NOT, VALUE_LESS, VALUE_GREATER -> CmpTarget.value(bytes(c.value()));
    };
    Cmp.Op op = switch (c.target()) {
      case VALUE_NOT -> Cmp.Op.NOT_EQUAL;
      case MOD_REVISION_LESS, CREATE_REVISION_LESS, VALUE_LESS -> Cmp.Op.LESS;
      case MOD_REVISION_GREATER, CREATE_REVISION_GREATER, VALUE_GREATER -> Cmp.Op.GREATER;
      default -> Cmp.Op.EQUAL;
    };
    return new Cmp(bytes(c.key()), op, target);
  }

  static io.etcd.jetcd.op.Op[] ops(List<Op> ops) {
    return ops.stream().map(JetcdConversions::op).toArray(io.etcd.jetcd.op.Op[]::new);
  }

  private static io.etcd.jetcd.op.Op op(Op op) {
    if (op instanceof Op.Put put) {
      PutOption.Builder options = PutOption.builder();
      if (put.lease() != 0) {
        options.withLeaseId(put.lease());
      }
      return io.etcd.jetcd.op.Op.put(bytes(put.key()), bytes(put.value()), options.build());
    }
    if (op instanceof Op.Range range) {
      return io.etcd.jetcd.op.Op.get(bytes(range.from()), GetOption.builder()
          .withRange(rangeEnd(range.to())).withLimit(range.limit()).build());
    }
    Op.Delete delete = (Op.Delete) op;
    DeleteOption.Builder options = DeleteOption.builder();
    if (delete.rangeEnd() != null) {
      options.withRange(rangeEnd(delete.rangeEnd()));
    }
    return io.etcd.jetcd.op.Op.delete(bytes(delete.key()), options.build());
  }

  static WatchEvent watchEvent(io.etcd.jetcd.watch.WatchEvent event) {
    WatchEvent.Type type =
        event.getEventType() == EventType.DELETE ? WatchEvent.Type.DELETE : WatchEvent.Type.PUT;
    return new WatchEvent(type, keyValue(event.getKeyValue()));
  }
}
