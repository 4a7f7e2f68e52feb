package io.etcfs.spi.shell;

/**
 * How a Gogo command service says what its words complete to. The service property
 * {@value #PROPERTY} (a string or an array, like {@code osgi.command.function}) holds one entry
 * per function: the function's name, then its words separated by spaces. A word starting with
 * {@code -} is an option; any other is the next operand, given as alternatives separated by
 * {@code |}: a literal word, or {@code @kind} for the candidates of every {@link
 * CompletionSource} of that kind. For example:
 *
 * <pre>
 *   fence @node --yes --json -h
 *   inode @path|@inode --json -h
 *   lock backend|switch --json -h
 * </pre>
 */
public final class Completion {
  /** The service property with a command service's completion entries. */
  public static final String PROPERTY = "etcfs.complete";
  /** The kind of the cluster's member names. */
  public static final String NODE = "node";
  /** The kind of paths: below this node's mountpoint, or from the filesystem's root. */
  public static final String PATH = "path";
  /** The kind of inode numbers (those this node has open or locked, with their paths). */
  public static final String INODE = "inode";

  private Completion() {}
}
