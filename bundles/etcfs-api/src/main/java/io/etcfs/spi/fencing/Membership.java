package io.etcfs.spi.fencing;

import java.util.concurrent.CompletionStage;
import org.osgi.annotation.versioning.ProviderType;

/**
 * This node's incarnation in the cluster. The node joins by writing its membership key under a
 * membership lease; the key's create revision is its generation. Every metadata commit compares
 * the generation, so once the node is fenced (its lease lapsed) none of its commits apply and it
 * must rejoin as a new generation.
 */
@ProviderType
public interface Membership {
  /** The node's name, unique in the cluster while it is a member. */
  String nodeName();

  /** The membership key; commits compare its create revision against {@link #generation()}. */
  byte[] memberKey();

  /** This incarnation's generation (the membership key's create revision). */
  long generation();

  /**
   * True once this node can no longer prove its membership alive (its own deadline from the last
   * acknowledged keep-alive passed) or it left. Never becomes false again.
   */
  boolean isFenced();

  /** Completes when this incarnation ends: fenced or left. */
  CompletionStage<Void> done();
}
