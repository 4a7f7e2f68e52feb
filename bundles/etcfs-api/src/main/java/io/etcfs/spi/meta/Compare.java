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

  /**
   * What a guard compares, and how. The first four are equality; the others as named (an
   * absent key has revisions 0, and fails every value compare, as in etcd).
   */
  public enum Target {
    CREATE_REVISION,
    MOD_REVISION,
    VERSION,
    VALUE,
    /** The key exists and holds anything but the value given (since 1.4). */
    VALUE_NOT,
    /** The key's mod revision is below the one given (2.1). */
    MOD_REVISION_LESS,
    /** The key's mod revision is above the one given (2.1). */
    MOD_REVISION_GREATER,
    /** The key's create revision is below the one given (2.1). */
    CREATE_REVISION_LESS,
    /** The key's create revision is above the one given (2.1). */
    CREATE_REVISION_GREATER,
    /** The key exists and its value sorts before the one given, bytewise unsigned (2.1). */
    VALUE_LESS,
    /** The key exists and its value sorts after the one given, bytewise unsigned (2.1). */
    VALUE_GREATER
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

  /** Holds while the key was last changed before {@code revision} (absent: 0) (2.1). */
  public static Compare modRevisionBelow(byte[] key, long revision) {
    return new Compare(key, Target.MOD_REVISION_LESS, revision, null);
  }

  /** Holds once the key has been changed after {@code revision} (2.1). */
  public static Compare modRevisionAbove(byte[] key, long revision) {
    return new Compare(key, Target.MOD_REVISION_GREATER, revision, null);
  }

  /** Holds while the key's current incarnation was created before {@code revision} (2.1). */
  public static Compare createRevisionBelow(byte[] key, long revision) {
    return new Compare(key, Target.CREATE_REVISION_LESS, revision, null);
  }

  /** Holds while the key's current incarnation was created after {@code revision} (2.1). */
  public static Compare createRevisionAbove(byte[] key, long revision) {
    return new Compare(key, Target.CREATE_REVISION_GREATER, revision, null);
  }

  /** Holds while the key exists and its value sorts before {@code value} (2.1). */
  public static Compare valueBelow(byte[] key, byte[] value) {
    return new Compare(key, Target.VALUE_LESS, 0, value);
  }

  /** Holds while the key exists and its value sorts after {@code value} (2.1). */
  public static Compare valueAbove(byte[] key, byte[] value) {
    return new Compare(key, Target.VALUE_GREATER, 0, value);
  }

  /** Holds while the key holds exactly {@code value}. */
  public static Compare value(byte[] key, byte[] value) {
    return new Compare(key, Target.VALUE, 0, value);
  }
}
