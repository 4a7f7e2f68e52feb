/**
 * The etcd {@link io.etcfs.spi.meta.MetaStore} on jetcd, as a library: {@link
 * io.etcfs.etcd.client.EtcdMetaStore} connected from {@link io.etcfs.etcd.client.EtcdSettings}.
 * Inside a node's framework nobody uses it directly: the bundle's component registers it as the
 * {@code MetaStore} service, and the bundle exports nothing. Outside the framework the CLI
 * ({@code etcfs format}, {@code status}, the checks of {@code mount}) and the tests connect through
 * it, with the bundle's jar on a plain class path; that is why it is not in {@code internal}.
 */
package io.etcfs.etcd.client;
