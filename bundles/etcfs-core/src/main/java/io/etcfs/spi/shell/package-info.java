/**
 * What the bundles' Gogo commands share: tables aligned to an 80-column terminal, and the same
 * rows as JSON for scripts; how their words complete ({@link Completion}, {@link
 * CompletionSource}, 1.2); the paths of inodes for display ({@link InodePaths}, 1.2).
 */
@Export
@Version("1.2.0")
package io.etcfs.spi.shell;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
