import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle
import TransportCore
import XMPP

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
public final class SocketTransport: Transport, PresenceEventReceiving {
    public let name: String
    public let path: String
    private let mode: mode_t
    private let options: LocalInputOptions
    /// The one loop of its server and its clients: the delivery worker runs there too
    /// (``executor``), so a line reaches a subscriber's socket without crossing a thread.
    private let loop: any EventLoop
    public let executor: (any TaskExecutor)?
    private let handler: any TransportEventHandler
    private let channels: @Sendable () -> Set<String>
    private let logger: Logger
    private let stopSignal = StopSignal()
    private let subscribers = NIOLockedValueBox<[Int: (channels: Set<String>, writer: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any NIOCore.Channel)]>([:])
    /// A subscriber that does not take a line within this time is disconnected, so one
    /// client that stopped reading cannot hold up deliveries for everyone.
    private let subscriberWriteTimeout: Duration = .seconds(2)
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
        self.loop = group.next()
        self.executor = EventLoopTaskExecutor(self.loop)
        self.handler = handler
        self.channels = channels
        var logger = logger
        logger[metadataKey: "transport"] = "\(name)"
        self.logger = logger
    }

    public func run() async throws {
        let server = UnixLineServer(
            path: self.path, mode: UInt32(self.mode),
            splitter: LineSplitter(maxLineBytes: self.options.maxLineBytes, invalidUTF8: self.options.invalidUTF8)
        )
        do {
            // Clients are read on the loop too: a line goes to the relay from its thread.
            try await withTaskExecutorPreference(self.executor) {
                try await server.run(group: self.loop, stop: self.stopSignal, ready: {
                    self.logger.info("listening", metadata: ["path": "\(self.path)"])
                    await self.handler.handle(.available, from: self.name)
                }, serve: { client in
                    await self.serve(client)
                })
            }
        } catch {
            // The service group only logs a failed service at debug level: say it here.
            self.logger.error("socket not served", metadata: ["path": "\(self.path)", "error": "\(error)"])
            await self.handler.handle(.unavailable(reason: "\(error)"), from: self.name)
            throw error
        }
    }

    public func stop() async {
        self.stopSignal.stop()
    }

    /// Sends a presence event to the clients subscribed to `channel`.
    public func receivePresence(channel: String, contact: Endpoint, nick: String, state: PresenceState) async {
        await self.broadcastEvent(PresenceEventLine.json(channel: channel, contact: contact, nick: nick, state: state), channel: channel)
    }

    /// Sends an occupant event (someone entered or left a room) to `channel`'s subscribers.
    public func receiveOccupant(channel: String, room: Endpoint, nick: String, joined: Bool) async {
        await self.broadcastEvent(PresenceEventLine.occupantJSON(channel: channel, room: room, nick: nick, joined: joined), channel: channel)
    }

    /// Sends a receipt event to the receipt's channel's subscribers.
    public func receiveReceipt(_ receipt: DeliveryReceipt) async {
        guard let channel = receipt.channel else { return }
        await self.broadcastEvent(receipt.jsonLine, channel: channel)
    }

    /// Tells the channel's subscribers that one of its alerts was acknowledged (issue 24).
    public func receiveAlertAck(_ ack: AlertAck, channel: String, id: String) async {
        await self.broadcastEvent(ack.jsonLine(channel: channel, id: id), channel: channel)
    }

    private func broadcastEvent(_ json: String, channel: String) async {
        var line = ByteBuffer(string: json)
        line.writeString("\n")
        let subscribers = self.subscribers.withLockedValue { $0 }
        for (id, subscriber) in subscribers where subscriber.channels.contains(channel) {
            _ = await self.send(line, to: subscriber.writer, channel: subscriber.channel, id: id)
        }
    }

    /// Broadcasts each delivery to the clients subscribed to its channel.
    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        let subscribers = self.subscribers.withLockedValue { $0 }
        // Subscribers dropped during this batch get none of its later lines.
        var dropped = Set<Int>()
        for delivery in deliveries {
            var line = ByteBuffer(string: LocalOutputLine.json(delivery))
            line.writeString("\n")
            for (id, subscriber) in subscribers where subscriber.channels.contains(delivery.channel) && !dropped.contains(id) {
                // A client's own message is not echoed back to it.
                if delivery.source.transport == self.name, delivery.sourceID.hasPrefix("\(self.name)-\(id)-") { continue }
                if !(await self.send(line, to: subscriber.writer, channel: subscriber.channel, id: id)) { dropped.insert(id) }
            }
        }
        return deliveries.map { _ in .delivered }
    }

    /// Writes one line to a subscriber, dropping the subscriber if it fails or does not keep
    /// up; false when it was dropped (logged once, by the call that dropped it).
    private func send(_ line: ByteBuffer, to writer: NIOAsyncChannelOutboundWriter<ByteBuffer>, channel: any NIOCore.Channel, id: Int) async -> Bool {
        // One timer on the client's loop, cancelled once the line is taken (no task, no
        // wakeup): a client that stopped reading is told and closed when it fires, which
        // ends the write waiting for room.
        let stalled = NIOLockedValueBox(false)
        let timer = channel.eventLoop.scheduleTask(in: TimeAmount(self.subscriberWriteTimeout)) {
            stalled.withLockedValue { $0 = true }
            // Best effort: the client's buffer may be full.
            channel.writeAndFlush(ByteBuffer(string: Self.error("disconnected: not reading fast enough") + "\n"), promise: nil)
            channel.close(promise: nil)
        }
        let written = (try? await writer.write(line)) != nil
        timer.cancel()
        let stall = stalled.withLockedValue { $0 }
        guard !written || stall else { return true }
        let removed = self.subscribers.withLockedValue { $0.removeValue(forKey: id) } != nil
        channel.close(promise: nil)
        if removed {
            if stall {
                self.logger.warning("socket subscriber not reading; disconnected", metadata: ["client": "\(id)"])
            } else {
                self.logger.info("socket subscriber gone", metadata: ["client": "\(id)"])
            }
        }
        return false
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
                self.subscribers.withLockedValue { $0[id] = (channels: [], writer: outbound, channel: client.channel) }
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
        case .repaired(let value):
            self.logger.warning("client line had invalid UTF-8; taken with U+FFFD in its place", metadata: ["client": "\(client)"])
            text = value
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
        guard let request = SocketClientRequest.decode(text) else {
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
            return Self.json(["ok": .string("subscribed"), "channels": .list(now)])
        }
        let content = request.content
        guard let body = request.body ?? (content.isEmpty ? nil : "") else { return Self.error("missing body") }
        if let channel = request.channel, !known.contains(channel) { return Self.error("unknown channel '\(channel)'") }
        var type: RelayChannel.DeliveryType?
        if let requested = request.type {
            guard let parsed = RelayChannel.DeliveryType(rawValue: requested) else { return Self.error("unknown type '\(requested)'") }
            type = parsed
        }
        return await self.submit(body: body, channel: request.channel, type: type, subject: request.subject, id: messageID, ack: request.ack == true, content: content)
    }

    /// Hands a message to the bridge; the answer comes after the bridge's durable commit.
    private func submit(
        body: String, channel: String?, type: RelayChannel.DeliveryType?, subject: String?, id: String, ack: Bool = false, content: MessageContent = MessageContent()
    ) async -> String? {
        var message = InboundMessage(
            source: Endpoint(transport: self.name), sender: self.options.nick, nick: self.options.nick, id: id,
            body: body.isEmpty ? nil : body, subject: subject, channel: channel, requestedType: type, deliverToSourceTransport: true
        )
        message.content = content
        switch await self.handler.handle(.message(message), from: self.name) {
        case .accepted: return ack ? Self.json(["ok": .string("queued"), "id": .string(id)]) : nil
        case .dropped(let reason): return Self.error("not relayed: \(reason)")
        case .duplicate(let first): return ack ? Self.json(["ok": .string("queued"), "id": .string(first)]) : nil
        }
    }

    static func error(_ message: String) -> String {
        Self.json(["error": .string(message)])
    }

    enum Field: Encodable {
        case string(String)
        case list([String])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .list(let values): try container.encode(values)
            }
        }
    }

    /// One JSON line with sorted keys.
    static func json(_ fields: [String: Field]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
