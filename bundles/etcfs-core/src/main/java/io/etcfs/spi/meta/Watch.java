package io.etcfs.spi.meta;

/** A running watch; closing it stops delivery. */
public interface Watch extends AutoCloseable {
  @Override
  void close();
}
