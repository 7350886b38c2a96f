import Bridge
import ArgumentParser
import Foundation
import TransportCore
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
                let own = message.to?.bare
                CommandLineOutput.line(self.json ? Self.jsonLine(message, encoder: encoder, ownJID: own) : Self.plainLine(message))
            case .stopped(let error):
                if let error {
                    CommandLineOutput.error("\(error)")
                    throw ExitStatus(error).exitCode
                }
                return
            case .online, .offline, .presence, .subscriptionRequest, .subscriptionChanged, .rosterChanged, .rosterFetched, .resumedAfterRestart, .archiveCursorMoved,
                .roomChanged, .occupant, .roomCursorMoved, .copyStanzaID:
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

    static func jsonLine(_ message: Message, encoder: JSONEncoder, ownJID: JID?) -> String {
        let record = Record(
            type: message.type.rawValue, from: message.from?.description, to: message.to?.description, id: message.id,
            body: message.body, subject: message.subject, timestamp: Self.timestamp(message, ownJID: ownJID)
        )
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// `from: [subject] body` on one line. Control characters (terminal escape sequences)
    /// and line breaks from the sender are shown escaped, so a message can neither drive
    /// the terminal nor fake a line from someone else.
    static func plainLine(_ message: Message) -> String {
        let subject = message.subject.map { "[\(VisibleText.escaped($0))] " } ?? ""
        return "\(message.from?.description ?? "?"): \(subject)\(VisibleText.escaped(message.body ?? ""))"
    }

    /// The XEP-0203 delay stamp when our own server or account added it (offline storage),
    /// else the time of arrival (ISO 8601, UTC). A sender's own stamp is not trusted.
    static func timestamp(_ message: Message, ownJID: JID?) -> String {
        if let delay = message.extensions.first(where: { $0.name == "delay" && $0.namespace == "urn:xmpp:delay" }),
            let stamp = delay[attribute: "stamp"], let own = ownJID,
            let from = delay[attribute: "from"].flatMap({ try? JID($0) }),
            from == own.bare || (from.localpart == nil && from.domainpart == own.domainpart)
        {
            return stamp
        }
        return Date().ISO8601Format()
    }
}
