import Foundation
import Logging
import ServiceLifecycle
import TransportCore

/// The stdin/stdout local transport: each input line is a message into its channels;
/// relayed messages are written as lines, `{sender}: {body}` or one JSON object each.
/// When standard input ends it can ask the bridge to finish and stop (pipes:
/// `make | xmpp-bridge run`).
public final class StdioTransport: Transport, PresenceEventReceiving {
    /// How relayed messages are written.
    public enum OutputFormat: String, Sendable, CaseIterable {
        case text
        case json
    }

    public let name: String
    private let options: LocalInputOptions
    private let output: OutputFormat
    private let exitOnEndOfInput: Bool
    private let handler: any TransportEventHandler
    private let logger: Logger
    /// Ends reading standard input (stopped by ``stop()``, or by the race once input ends).
    private let stopSignal = StopSignal()
    private let standardOutput = StandardOutput()
    /// Set by ``stop()`` only: a reload removed this transport.
    private let removed = StopSignal()

    public init(
        name: String, options: LocalInputOptions, output: OutputFormat, exitOnEndOfInput: Bool,
        handler: any TransportEventHandler, logger: Logger
    ) {
        self.name = name
        self.options = options
        self.output = output
        self.exitOnEndOfInput = exitOnEndOfInput
        self.handler = handler
        var logger = logger
        logger[metadataKey: "transport"] = "\(name)"
        self.logger = logger
    }

    public func run() async throws {
        await self.handler.handle(.available, from: self.name)
        let pump = LineInputPump(transport: self.name, options: self.options, handler: self.handler, logger: self.logger)
        let inputEnded = await cancelWhenGracefulShutdown {
            await self.stopSignal.race { await pump.run(descriptor: 0) }
        }
        if self.exitOnEndOfInput, inputEnded, !Task.isShuttingDownGracefully, !Task.isCancelled {
            self.logger.info("standard input ended")
            await self.handler.handle(.inputFinished, from: self.name)
        }
        // Stay up for output until the group shuts this service down or a reload removes
        // us: a service returning early during a graceful shutdown fails the whole group.
        await self.removed.race { try? await gracefulShutdown() }
    }

    public func stop() async {
        self.stopSignal.stop()
        self.removed.stop()
    }

    /// In JSON mode, presence changes of channel members are written as event lines.
    public func receivePresence(channel: String, contact: Endpoint, nick: String, state: PresenceState) async {
        guard self.output == .json else { return }
        self.standardOutput.write(PresenceEventLine.json(channel: channel, contact: contact, nick: nick, state: state) + "\n")
    }

    public func receiveOccupant(channel: String, room: Endpoint, nick: String, joined: Bool) async {
        guard self.output == .json else { return }
        self.standardOutput.write(PresenceEventLine.occupantJSON(channel: channel, room: room, nick: nick, joined: joined) + "\n")
    }

    public func receiveReceipt(_ receipt: DeliveryReceipt) async {
        guard self.output == .json else { return }
        self.standardOutput.write(receipt.jsonLine + "\n")
    }

    public func receiveAlertAck(_ ack: AlertAck, channel: String, id: String) async {
        guard self.output == .json else { return }
        self.standardOutput.write(ack.jsonLine(channel: channel, id: id) + "\n")
    }

    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        var text = ""
        for delivery in deliveries {
            text += LocalOutputLine.render(delivery, as: self.output) + "\n"
        }
        guard self.standardOutput.write(text) else {
            self.logger.error("standard output is closed; relayed messages for it are dropped")
            return deliveries.map { _ in .failed("standard output is closed") }
        }
        return deliveries.map { _ in .delivered }
    }
}
