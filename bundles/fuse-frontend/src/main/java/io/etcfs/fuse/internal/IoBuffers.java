package io.etcfs.fuse.internal;

import com.kenai.jffi.MemoryIO;
import java.nio.ByteBuffer;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;

/**
 * The ByteBuffers read and write hand to the Vfs. Zero-copy (the default) wraps libfuse's own
 * buffer as a direct ByteBuffer, so file data is copied only by the Vfs itself; the copying mode
 * goes through one direct buffer per thread. Either way the buffer is valid only until the
 * callback returns: the Vfs must copy what it keeps.
 */
final class IoBuffers {
  private static final int INITIAL = 128 * 1024;
  private final boolean zeroCopy;
  private final ThreadLocal<ByteBuffer> scratch = ThreadLocal.withInitial(() -> allocate(INITIAL));

  IoBuffers(boolean zeroCopy) {
    this.zeroCopy = zeroCopy;
  }

  /** A buffer of {@code size} bytes to read into. */
  ByteBuffer forRead(Pointer fuseBuffer, int size) {
    return zeroCopy ? wrap(fuseBuffer, size) : scratch(size);
  }

  /** Puts what the Vfs read into libfuse's buffer, if it is not already there. */
  void readDone(Pointer fuseBuffer, ByteBuffer read, int bytes) {
    if (!zeroCopy && bytes > 0) {
      address(read).transferTo(0, fuseBuffer, 0, bytes);
    }
  }

  /** The {@code size} bytes to write, as a buffer positioned at 0. */
  ByteBuffer forWrite(Pointer fuseBuffer, int size) {
    if (zeroCopy) {
      return wrap(fuseBuffer, size);
    }
    ByteBuffer buffer = scratch(size);
    fuseBuffer.transferTo(0, address(buffer), 0, size);
    return buffer;
  }

  private static ByteBuffer wrap(Pointer fuseBuffer, int size) {
    if (size == 0) {
      return ByteBuffer.allocate(0);
    }
    return MemoryIO.getInstance().newDirectByteBuffer(fuseBuffer.address(), size);
  }

  private ByteBuffer scratch(int size) {
    ByteBuffer buffer = scratch.get();
    if (buffer.capacity() < size) {
      buffer = allocate(size);
      scratch.set(buffer);
    }
    return buffer.clear().limit(size);
  }

  /** The buffer's memory from its first byte, whatever its position. */
  private static Pointer address(ByteBuffer direct) {
    return Pointer.wrap(
        Runtime.getSystemRuntime(), MemoryIO.getInstance().getDirectBufferAddress(direct));
  }

  private static ByteBuffer allocate(int size) {
    return ByteBuffer.allocateDirect(size);
  }
}
