import Foundation
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
import TransportCore
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

    /// Creates the FIFO if needed and opens it without following links; throws if the path
    /// is something else, belongs to another user, or grants more than the configured mode
    /// (whoever could open it may already hold it open, to inject messages later). The
    /// mode is set on the open descriptor (no path race).
    func open() throws -> Int32 {
        var status = stat()
        var created = false
        if lstat(self.path, &status) != 0 {
            let directory = (self.path as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            // 0600 at most while it is being made: no one else can open it before the
            // descriptor below is ours.
            guard mkfifo(self.path, self.mode & 0o600) == 0 else {
                throw SetupError(description: "cannot create FIFO \(self.path): \(String(cString: strerror(errno)))")
            }
            created = true
        }
        let descriptor = Glibc.open(self.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw SetupError(description: "cannot open FIFO \(self.path): \(String(cString: strerror(errno)))")
        }
        do {
            try self.check(descriptor, created: created)
        } catch {
            close(descriptor)
            throw error
        }
        // Blocking reads from here on (the reader has its own thread).
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return descriptor
    }

    /// The open FIFO is ours and no wider than configured; then it gets the configured mode.
    private func check(_ descriptor: Int32, created: Bool) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else {
            throw SetupError(description: "\(self.path) exists and is not a FIFO")
        }
        let owner = geteuid()
        guard status.st_uid == owner else {
            throw SetupError(
                description: "FIFO \(self.path) belongs to uid \(status.st_uid), not to this process (uid \(owner)): its owner could let anyone write messages into it; remove it and xmpp-bridge makes its own"
            )
        }
        let mode = status.st_mode & 0o7777
        guard created || mode & ~self.mode == 0 else {
            throw SetupError(
                description: "FIFO \(self.path) has mode \(String(mode, radix: 8)), wider than the configured \(String(self.mode, radix: 8)): whoever could open it may hold it open to inject messages; remove it (xmpp-bridge makes it anew) or configure its mode"
            )
        }
        guard fchmod(descriptor, self.mode) == 0 else {
            throw SetupError(description: "cannot set the mode of FIFO \(self.path): \(String(cString: strerror(errno)))")
        }
    }

    public func run() async throws {
        let descriptor: Int32
        do {
            descriptor = try self.open()
        } catch {
            // The service group only logs a failed service at debug level: say it here.
            self.logger.error("FIFO not read", metadata: ["path": "\(self.path)", "error": "\(error)"])
            await self.handler.handle(.unavailable(reason: "\(error)"), from: self.name)
            throw error
        }
        defer { close(descriptor) }
        self.logger.info("reading FIFO", metadata: ["path": "\(self.path)"])
        let pump = LineInputPump(transport: self.name, options: self.options, handler: self.handler, logger: self.logger)
        let reader = pump.reader(for: descriptor)
        await cancelWhenGracefulShutdown {
            _ = await self.stopSignal.race { await pump.run(reader) }
        }
        // Wake the reader thread out of its blocking read so it ends with us.
        reader.stop()
        _ = write(descriptor, "\n", 1)
    }

    public func stop() async {
        self.stopSignal.stop()
    }

    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        deliveries.map { _ in .failed("the FIFO transport \(self.name) is input only") }
    }
}
