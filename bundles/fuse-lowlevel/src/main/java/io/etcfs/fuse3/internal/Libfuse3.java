package io.etcfs.fuse3.internal;

import jnr.ffi.annotations.IgnoreError;

/**
 * The functions of libfuse 3's low-level API this front end calls (Debian 12: libfuse3.so.3,
 * 3.14). Pointers are passed as {@code long} addresses: on x86-64 and arm64 a pointer and a 64-bit
 * integer travel in the same register, and an address is what {@link Mem} works with. Replies
 * may be sent from any thread, after the callback has returned (fuse_lowlevel.h).
 */
public interface Libfuse3 {
  String SONAME = "libfuse3.so.3";

  long fuse_session_new(long args, long ops, long opSize, long userdata);

  int fuse_session_mount(long se, String mountpoint);

  void fuse_session_unmount(long se);

  void fuse_session_destroy(long se);

  void fuse_session_exit(long se);

  int fuse_session_fd(long se);

  int fuse_session_exited(long se);

  /**
   * Reads the next request into {@code buf} (a zeroed struct fuse_buf the first time; libfuse
   * allocates its memory, which the caller frees at the end): its size, 0 once the session has
   * ended (unmounted), or -errno.
   */
  int fuse_session_receive_buf(long se, long buf);

  /** Decodes the request in {@code buf} and calls its operation (which may reply later). */
  void fuse_session_process_buf(long se, long buf);

  @IgnoreError
  long fuse_req_ctx(long req);

  @IgnoreError
  int fuse_req_interrupted(long req);

  @IgnoreError
  int fuse_reply_err(long req, int err);

  @IgnoreError
  void fuse_reply_none(long req);

  @IgnoreError
  int fuse_reply_entry(long req, long entryParam);

  @IgnoreError
  int fuse_reply_create(long req, long entryParam, long fileInfo);

  @IgnoreError
  int fuse_reply_attr(long req, long stat, double attrTimeout);

  @IgnoreError
  int fuse_reply_readlink(long req, long link);

  @IgnoreError
  int fuse_reply_open(long req, long fileInfo);

  @IgnoreError
  int fuse_reply_write(long req, long count);

  @IgnoreError
  int fuse_reply_buf(long req, long buf, long size);

  @IgnoreError
  int fuse_reply_statfs(long req, long statvfs);

  @IgnoreError
  int fuse_reply_xattr(long req, long count);

  @IgnoreError
  int fuse_reply_lock(long req, long flock);

  @IgnoreError
  int fuse_reply_lseek(long req, long off);

  int fuse_lowlevel_notify_inval_inode(long se, long ino, long off, long len);

  int fuse_lowlevel_notify_inval_entry(long se, long parent, long name, long nameLength);

  int fuse_lowlevel_notify_delete(long se, long parent, long child, long name, long nameLength);
}
