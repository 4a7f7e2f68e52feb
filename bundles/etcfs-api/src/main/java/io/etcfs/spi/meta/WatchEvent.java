package io.etcfs.spi.meta;

/**
 * One change seen by a watch.
 *
 * @param type a put or a delete
 * @param kv the key after the change (for a delete: the key with an empty value, at the delete's
 *     revision)
 */
public record WatchEvent(Type type, KeyValue kv) {
  public enum Type {
    PUT,
    DELETE
  }
}
