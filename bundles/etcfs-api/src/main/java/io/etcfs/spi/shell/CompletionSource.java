package io.etcfs.spi.shell;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Completions of one kind of word, offered by the bundle that owns the data: node names by
 * fencing, paths and inode numbers by the core. A whiteboard: register one with the service
 * property {@value #KIND}; the shell bundle offers its candidates wherever a command's
 * {@value Completion#PROPERTY} names that kind, in {@code etcfs shell} and in the shell of
 * {@code etcfs mount --foreground} alike.
 */
@ConsumerType
public interface CompletionSource {
  /** The service property naming the kind of word completed: {@code node}, {@code path}, ... */
  String KIND = "etcfs.completion.kind";

  /**
   * The candidates {@code word} (possibly empty) can grow into. Called on every Tab, so it
   * answers from what the node has at hand where it can; a failure offers nothing.
   */
  List<Candidate> complete(String word);
}
