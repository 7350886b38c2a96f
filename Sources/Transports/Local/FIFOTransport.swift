import Foundation
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The named-pipe local transport (input only): created if missing (mode 0600 unless
/// configured), so `echo "backup ok" > /run/xmpp-bridge/alerts` from cron works any number
/// of times. The pipe is held open for reading and writing, so it never reports end of
/// file when a writer closes and is always ready for the next one. Writers' lines of up to
/// PIPE_BUF bytes arrive whole (the kernel writes them atomically).
public final class FIFOTransport: Transport {
    public let name: String
    public let path: String
    private let mode: mode_t
    private let options: LocalInputOptions
    private let handler: any TransportEventHandler
    private let logger: Logger
    private let stopSignal = StopSignal()

    public init(name: String, path: String, mode: UInt32, options: LocalInputOptions, handler: any TransportEventHandler, logger: Logger) {
        self.name = name
        self.path = path
        self.mode = mode_t(mode)
        self.options = options
        self.handler = handler
        var logger = logger
        logger[metadataKey: "transport"] = "\(name)"
        self.logger = logger
    }

    /// Why the FIFO cannot be used.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Creates the FIFO if needed and opens it; throws if the path is something else.
    public func open() throws -> Int32 {
        var status = stat()
        if lstat(self.path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFIFO else {
                throw SetupError(description: "\(self.path) exists and is not a FIFO")
            }
        } else {
            let directory = (self.path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            guard mkfifo(self.path, self.mode) == 0 else {
                throw SetupError(description: "cannot create FIFO \(self.path): \(String(cString: strerror(errno)))")
            }
        }
        chmod(self.path, self.mode)
        let descriptor = Glibc.open(self.path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw SetupError(description: "cannot open FIFO \(self.path): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    public func run() async throws {
        let descriptor = try self.open()
        self.logger.info("reading FIFO", metadata: ["path": "\(self.path)"])
        let pump = LineInputPump(transport: self.name, options: self.options, handler: self.handler, logger: self.logger)
        await cancelWhenGracefulShutdown {
            await self.stopSignal.race { await pump.run(descriptor: descriptor) }
        }
    }

    public func stop() async {
        self.stopSignal.stop()
    }

    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        deliveries.map { _ in .failed("the FIFO transport \(self.name) is input only") }
    }
}
