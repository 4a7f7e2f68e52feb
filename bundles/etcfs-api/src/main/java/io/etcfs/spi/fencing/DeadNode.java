package io.etcfs.spi.fencing;

/**
 * An incarnation of a node that ended without a clean leave and is being recovered.
 *
 * @param node the node's name
 * @param generation the incarnation's generation (the create revision of its membership key)
 */
public record DeadNode(String node, long generation) {}
