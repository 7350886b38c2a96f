import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads lines from a file descriptor (stdin, a FIFO, a file) on its own thread and
/// hands them over as an async sequence with backpressure: the thread waits while
/// `bufferedLines` lines are unconsumed, so a fast producer cannot grow memory.
public final class FileLineReader: Sendable {
    public let lines: AsyncStream<LineSplitter.Line>
    private let credits: DispatchSemaphore

    /// Starts reading `descriptor` until end of file. The descriptor is not closed.
    public init(descriptor: Int32, splitter: LineSplitter, bufferedLines: Int = 256) {
        let credits = DispatchSemaphore(value: max(1, bufferedLines))
        self.credits = credits
        let (stream, continuation) = AsyncStream.makeStream(of: LineSplitter.Line.self)
        self.lines = stream
        let thread = Thread {
            var splitter = splitter
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var pending: [LineSplitter.Line] = []
            func hand(_ lines: inout [LineSplitter.Line]) {
                for line in lines {
                    credits.wait()
                    continuation.yield(line)
                }
                lines.removeAll(keepingCapacity: true)
            }
            while true {
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

    /// Call once per line taken from ``lines`` so the reader may go on.
    public func consumed() {
        self.credits.signal()
    }
}
