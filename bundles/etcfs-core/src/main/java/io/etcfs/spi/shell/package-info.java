/**
 * What the bundles' Gogo commands share: tables aligned to an 80-column terminal, and the same
 * rows as JSON for scripts.
 */
@Export
@Version("1.1.0")
package io.etcfs.spi.shell;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
