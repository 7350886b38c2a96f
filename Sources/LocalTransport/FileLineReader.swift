import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
import TransportCore
#endif

/// Reads lines from a file descriptor (stdin, a FIFO, a file) on its own thread and
/// hands them over in batches (the lines completed by one `read`), with backpressure:
/// the thread waits while `bufferedBatches` batches are unconsumed, so a fast producer
/// cannot grow memory. Batches let a consumer write many lines with one flush.
public final class FileLineReader: Sendable {
    public let batches: AsyncStream<[LineSplitter.Line]>
    private let credits: DispatchSemaphore
    private let stopped = NIOLockedValueBox(false)

    /// Starts reading `descriptor` until end of file. The descriptor is not closed.
    public init(descriptor: Int32, splitter: LineSplitter, bufferedBatches: Int = 16) {
        let credits = DispatchSemaphore(value: max(1, bufferedBatches))
        self.credits = credits
        let stopped = self.stopped
        let (stream, continuation) = AsyncStream.makeStream(of: [LineSplitter.Line].self)
        self.batches = stream
        let thread = Thread {
            var splitter = splitter
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var pending: [LineSplitter.Line] = []
            func hand(_ lines: inout [LineSplitter.Line]) {
                guard !lines.isEmpty else { return }
                credits.wait()
                continuation.yield(lines)
                lines.removeAll(keepingCapacity: true)
            }
            while !stopped.withLockedValue({ $0 }) {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                splitter.feed(buffer[0..<count], into: &pending)
                hand(&pending)
            }
            splitter.finish(into: &pending)
            hand(&pending)
            continuation.finish()
        }
        thread.name = "xmpp-bridge line reader fd \(descriptor)"
        thread.start()
    }

    /// Makes the reader end after its current `read` (the owner wakes it, e.g. by writing
    /// a newline into its FIFO) and hands over no more lines.
    public func stop() {
        self.stopped.withLockedValue { $0 = true }
        self.credits.signal()
    }

    /// Call once per batch taken from ``batches`` so the reader may go on.
    public func consumed() {
        self.credits.signal()
    }
}
