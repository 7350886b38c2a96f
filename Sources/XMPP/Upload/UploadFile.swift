import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// A file's bytes read for an upload (XEP-0363 §6 sends them as one PUT body), refused
/// before reading when it is larger than allowed. The size comes from the open file
/// itself, so a file that grows or shrinks while read is an error, not a short upload.
///
/// Blocking file I/O: call it off event loops (``XMPPSession`` does, in a detached task).
enum UploadFile {
    /// Reads the regular file at `path`; `maximumSize` bytes at most, else
    /// ``UploadError/fileTooLarge(size:maxFileSize:)`` with the limit.
    static func read(path: String, maximumSize: Int) throws(UploadError) -> ByteBuffer {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadableFile(path: path, reason: Self.lastError()) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadableFile(path: path, reason: Self.lastError()) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .unreadableFile(path: path, reason: "not a regular file") }
        let size = Int(status.st_size)
        guard size <= maximumSize else { throw .fileTooLarge(size: size, maxFileSize: maximumSize) }
        var buffer = ByteBufferAllocator().buffer(capacity: size)
        while buffer.readableBytes < size {
            let wanted = size - buffer.readableBytes
            var failure: Int32 = 0
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { bytes in
                while true {
                    let result = Glibc.read(descriptor, bytes.baseAddress, wanted)
                    if result < 0, errno == EINTR { continue }
                    if result < 0 { failure = errno }
                    return max(0, result)
                }
            }
            if failure != 0 { throw .unreadableFile(path: path, reason: String(cString: strerror(failure))) }
            if count == 0 { throw .unreadableFile(path: path, reason: "the file shrank while it was read") }
        }
        var probe: UInt8 = 0
        guard Glibc.read(descriptor, &probe, 1) == 0 else { throw .unreadableFile(path: path, reason: "the file grew while it was read") }
        return buffer
    }

    private static func lastError() -> String {
        String(cString: strerror(errno))
    }
}
