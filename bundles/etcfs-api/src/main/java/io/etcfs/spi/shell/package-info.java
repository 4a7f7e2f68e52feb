/**
 * What the bundles' Gogo commands share: how their words complete ({@link Completion}, {@link
 * CompletionSource}, 1.2); the paths of inodes for display ({@link InodePaths}, 1.2). 2.0: the
 * table and argument helpers ({@code io.etcfs.support.shell}) left the API; each bundle includes
 * them privately.
 */
@Export
@Version("2.0.0")
package io.etcfs.spi.shell;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
