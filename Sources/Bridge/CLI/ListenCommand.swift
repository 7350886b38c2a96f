import ArgumentParser
import Foundation
import XMPP

/// `xmpp-bridge listen`: print incoming messages until interrupted.
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Print incoming messages (plain text, or one JSON object per line with --json).",
        discussion: ExitStatus.helpText
    )

    @Flag(help: "One JSON object per line: type, from, to, id, body, subject, timestamp.")
    var json = false

    @Option(name: .customLong("from"), help: "Only messages from this JID (bare JIDs match every resource).")
    var senders: [String] = []

    @OptionGroup var account: AccountOptions
    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = try self.log.makeLogger("xmpp-bridge.listen")
        var filter: [JID] = []
        for sender in self.senders {
            guard let jid = try? JID(sender) else { throw ValidationError("invalid --from JID '\(sender)'") }
            filter.append(jid)
        }
        let session = try SessionRunner.makeSession(self.account, presence: Presence(), fetchRoster: true, reconnects: true, logger: logger)
        var events = session.events.makeAsyncIterator()
        let runner = try await SessionRunner.start(session, events: &events)
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) {
            Task { await runner.stop() }
        }
        defer { signals.cancel() }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        while let event = await events.next() {
            switch event {
            case .message(let message, let carbon):
                guard carbon == nil, message.body != nil || message.subject != nil else { continue }
                if !filter.isEmpty {
                    guard let from = message.from, filter.contains(where: { $0.isBare ? $0 == from.bare : $0 == from }) else { continue }
                }
                CommandLineOutput.line(self.json ? Self.jsonLine(message, encoder: encoder) : Self.plainLine(message))
            case .stopped(let error):
                if let error {
                    CommandLineOutput.error("\(error)")
                    throw ExitStatus(error).exitCode
                }
                return
            case .online, .offline, .presence, .subscriptionRequest, .subscriptionChanged, .rosterChanged:
                continue
            }
        }
    }

    struct Record: Encodable {
        var type: String
        var from: String?
        var to: String?
        var id: String?
        var body: String?
        var subject: String?
        var timestamp: String
    }

    static func jsonLine(_ message: Message, encoder: JSONEncoder) -> String {
        let record = Record(
            type: message.type.rawValue, from: message.from?.description, to: message.to?.description, id: message.id,
            body: message.body, subject: message.subject, timestamp: Self.timestamp(message)
        )
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func plainLine(_ message: Message) -> String {
        let subject = message.subject.map { "[\($0)] " } ?? ""
        return "\(message.from?.description ?? "?"): \(subject)\(message.body ?? "")"
    }

    /// The XEP-0203 delay stamp if the server stored the message, else now (ISO 8601, UTC).
    static func timestamp(_ message: Message) -> String {
        if let delay = message.extensions.first(where: { $0.name == "delay" && $0.namespace == "urn:xmpp:delay" }),
            let stamp = delay[attribute: "stamp"]
        {
            return stamp
        }
        return Date().ISO8601Format()
    }
}
