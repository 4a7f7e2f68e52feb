package io.etcfs.alloc.arena.internal;

/**
 * One change to an arena's reverse map: a put of {@code ref} at block {@code start}, or a delete
 * of the key there when {@code ref} is null.
 */
record RefChange(long start, Ref ref) {}
