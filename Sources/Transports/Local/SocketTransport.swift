import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The Unix-domain socket local transport: a server for many concurrent clients. A
/// client sends plain lines or JSON lines (`{"channel":…, "body":…, "type":…,
/// "subject":…}`) and may subscribe to channels to receive their traffic as JSON lines.
/// A line over the limit, bad JSON, an unknown channel or a message the bridge will not
/// relay gets a one-line JSON error back (`{"error":…}`); the connection stays up. The
/// socket is mode 0600 unless configured; a stale socket file is replaced, a live one
/// (another process listening) is not stolen.
public final class SocketTransport: Transport {
    public let name: String
    public let path: String
    private let mode: mode_t
    private let options: LocalInputOptions
    private let group: any EventLoopGroup
    private let handler: any TransportEventHandler
    private let channels: @Sendable () -> Set<String>
    private let logger: Logger
    private let stopSignal = StopSignal()
    private let subscribers = NIOLockedValueBox<[Int: (channels: Set<String>, writer: NIOAsyncChannelOutboundWriter<ByteBuffer>)]>([:])
    private let nextClient = NIOLockedValueBox(0)

    /// - Parameter channels: the channel names that exist now (they change on reload).
    public init(
        name: String, path: String, mode: UInt32, options: LocalInputOptions, group: any EventLoopGroup,
        handler: any TransportEventHandler, channels: @escaping @Sendable () -> Set<String>, logger: Logger
    ) {
        self.name = name
        self.path = path
        self.mode = mode_t(mode)
        self.options = options
        self.group = group
        self.handler = handler
        self.channels = channels
        var logger = logger
        logger[metadataKey: "transport"] = "\(name)"
        self.logger = logger
    }

    /// Why the socket cannot be served.
    public struct SetupError: Error, CustomStringConvertible {
        public let description: String
    }

    public func run() async throws {
        try self.removeStaleSocket()
        let splitter = LineSplitter(maxLineBytes: self.options.maxLineBytes, invalidUTF8: self.options.invalidUTF8)
        let server = try await ServerBootstrap(group: self.group)
            .bind(unixDomainSocketPath: self.path, cleanupExistingSocketFile: false) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(splitter: splitter)))
                    return try NIOAsyncChannel<LineSplitter.Line, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        chmod(self.path, self.mode)
        self.logger.info("listening", metadata: ["path": "\(self.path)"])
        await self.handler.handle(.available, from: self.name)
        let stopSignal = self.stopSignal
        Task {
            await stopSignal.wait()
            server.channel.close(promise: nil)
        }
        try await withGracefulShutdownHandler {
            try await server.executeThenClose { clients in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await client in clients {
                        group.addTask { await self.serve(client) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
        unlink(self.path)
    }

    public func stop() async {
        self.stopSignal.stop()
    }

    /// Broadcasts each delivery to the clients subscribed to its channel.
    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        let subscribers = self.subscribers.withLockedValue { $0 }
        for delivery in deliveries {
            var line = ByteBuffer(string: LocalOutputLine.json(delivery))
            line.writeString("\n")
            for (id, subscriber) in subscribers where subscriber.channels.contains(delivery.channel) {
                // A client's own message is not echoed back to it.
                if delivery.source.transport == self.name, delivery.sourceID.hasPrefix("\(self.name)-\(id)-") { continue }
                do {
                    try await subscriber.writer.write(line)
                } catch {
                    _ = self.subscribers.withLockedValue { $0.removeValue(forKey: id) }
                }
            }
        }
        return deliveries.map { _ in .delivered }
    }

    // MARK: -

    private func serve(_ client: NIOAsyncChannel<LineSplitter.Line, ByteBuffer>) async {
        let id = self.nextClient.withLockedValue { value in
            value += 1
            return value
        }
        let prefix = "\(self.name)-\(id)-\(UInt64(Date().timeIntervalSince1970 * 1000))"
        var counter = 0
        do {
            try await client.executeThenClose { inbound, outbound in
                self.subscribers.withLockedValue { $0[id] = (channels: [], writer: outbound) }
                for try await line in inbound {
                    counter += 1
                    if let reply = await self.handle(line, client: id, messageID: "\(prefix)-\(counter)") {
                        try await outbound.write(ByteBuffer(string: reply + "\n"))
                    }
                }
            }
        } catch {
            self.logger.debug("client connection ended", metadata: ["error": "\(error)"])
        }
        _ = self.subscribers.withLockedValue { $0.removeValue(forKey: id) }
    }

    /// Handles one client line; returns the JSON line to answer, if any.
    private func handle(_ line: LineSplitter.Line, client: Int, messageID: String) async -> String? {
        let text: String
        switch line {
        case .text(let value): text = value
        case .tooLong(let bytes):
            self.logger.warning("client line over the limit", metadata: ["bytes": "\(bytes)"])
            return Self.error("line too long: \(bytes) bytes, limit \(self.options.maxLineBytes)")
        case .invalidUTF8:
            self.logger.warning("client line with invalid UTF-8")
            return Self.error("invalid UTF-8")
        }
        guard text.first == "{" else {
            return await self.submit(body: text, channel: nil, type: nil, subject: nil, id: messageID)
        }
        let request: SocketClientRequest
        do {
            request = try JSONDecoder().decode(SocketClientRequest.self, from: Data(text.utf8))
        } catch {
            self.logger.warning("client sent bad JSON")
            return Self.error("bad JSON")
        }
        let known = self.channels()
        if request.subscribe != nil || request.unsubscribe != nil {
            let wanted = Set(request.subscribe ?? []).union(request.unsubscribe ?? [])
            if let unknown = wanted.subtracting(known).sorted().first { return Self.error("unknown channel '\(unknown)'") }
            let now = self.subscribers.withLockedValue { subscribers -> [String] in
                guard var entry = subscribers[client] else { return [] }
                entry.channels.formUnion(request.subscribe ?? [])
                entry.channels.subtract(request.unsubscribe ?? [])
                subscribers[client] = entry
                return entry.channels.sorted()
            }
            return #"{"ok":"subscribed","channels":["# + now.map { "\"\(Self.escape($0))\"" }.joined(separator: ",") + "]}"
        }
        guard let body = request.body else { return Self.error("missing body") }
        if let channel = request.channel, !known.contains(channel) { return Self.error("unknown channel '\(channel)'") }
        var type: Channel.DeliveryType?
        if let requested = request.type {
            guard let parsed = Channel.DeliveryType(rawValue: requested) else { return Self.error("unknown type '\(requested)'") }
            type = parsed
        }
        return await self.submit(body: body, channel: request.channel, type: type, subject: request.subject, id: messageID)
    }

    private func submit(body: String, channel: String?, type: Channel.DeliveryType?, subject: String?, id: String) async -> String? {
        let message = InboundMessage(
            source: Endpoint(transport: self.name), sender: self.options.nick, nick: self.options.nick, id: id,
            body: body, subject: subject, channel: channel, requestedType: type, deliverToSourceTransport: true
        )
        switch await self.handler.handle(.message(message), from: self.name) {
        case .accepted: return nil
        case .dropped(let reason): return Self.error("not relayed: \(reason)")
        }
    }

    private func removeStaleSocket() throws {
        var status = stat()
        guard lstat(self.path, &status) == 0 else {
            let directory = (self.path as NSString).deletingLastPathComponent
            if !directory.isEmpty { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            return
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SetupError(description: "\(self.path) exists and is not a socket")
        }
        if Self.someoneListens(at: self.path) {
            throw SetupError(description: "\(self.path) is in use by another process")
        }
        unlink(self.path)
    }

    /// Whether connecting to the socket file succeeds (a live server owns it).
    public static func someoneListens(at path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return result == 0
    }

    static func error(_ message: String) -> String {
        #"{"error":""# + self.escape(message) + #""}"#
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 {
                    result += String(format: "\\u%04x", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}
