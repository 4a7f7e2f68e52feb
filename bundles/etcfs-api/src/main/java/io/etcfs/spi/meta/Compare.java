package io.etcfs.spi.meta;

/**
 * One guard of a {@link Txn}: the transaction's success branch runs only if every guard holds.
 * A key that does not exist has create revision, mod revision and version 0.
 *
 * @param key the key compared
 * @param target what of the key is compared
 * @param expected the expected revision or version (for {@link Target#VALUE}, unused)
 * @param value the expected value (for {@link Target#VALUE}), or the one ruled out (for
 *     {@link Target#VALUE_NOT})
 */
public record Compare(byte[] key, Target target, long expected, byte[] value) {

  /** What a guard compares. All comparisons are equality, except {@link #VALUE_NOT}. */
  public enum Target {
    CREATE_REVISION,
    MOD_REVISION,
    VERSION,
    VALUE,
    /** The key exists and holds anything but the value given (since 1.4). */
    VALUE_NOT
  }

  public Compare {
    key = key.clone();
    value = value == null ? null : value.clone();
  }

  /** Holds while the key was last changed at {@code revision} (0: the key is absent). */
  public static Compare modRevision(byte[] key, long revision) {
    return new Compare(key, Target.MOD_REVISION, revision, null);
  }

  /** Holds while the key's current incarnation was created at {@code revision}. */
  public static Compare createRevision(byte[] key, long revision) {
    return new Compare(key, Target.CREATE_REVISION, revision, null);
  }

  /** Holds while the key is absent. */
  public static Compare absent(byte[] key) {
    return new Compare(key, Target.VERSION, 0, null);
  }

  /**
   * Holds while the key exists and does not hold {@code value} (etcd's not-equal on the value,
   * which fails for an absent key).
   */
  public static Compare valueNot(byte[] key, byte[] value) {
    return new Compare(key, Target.VALUE_NOT, 0, value);
  }

  /** Holds while the key holds exactly {@code value}. */
  public static Compare value(byte[] key, byte[] value) {
    return new Compare(key, Target.VALUE, 0, value);
  }
}
