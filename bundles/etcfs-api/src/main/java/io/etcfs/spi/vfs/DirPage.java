package io.etcfs.spi.vfs;

import java.util.List;

/**
 * A page of a directory listing, "." and ".." not included.
 *
 * @param entries the entries after the cookie asked for, in cookie order
 * @param more whether entries follow the last one
 */
public record DirPage(List<DirEntry> entries, boolean more) {
  public DirPage {
    entries = List.copyOf(entries);
  }
}
