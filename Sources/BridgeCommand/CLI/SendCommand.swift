import BridgeRelay
import Bridge
import ArgumentParser
import Foundation
import LocalTransport
import TransportCore
import XMPP

/// `xmpp-bridge send`: the sendxmpp use. Exits 0 only when the server has taken
/// every message (a ping round trip after the last one; the server handles a stream in order).
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a message (from -m or standard input) to one or more JIDs.",
        discussion: """
            With --file (repeatable) each file is uploaded through the account's HTTP File
            Upload service (XEP-0363) and its URL sent so that clients show the file inline;
            -m then adds a caption sent before the files, and standard input is not read.

            Without -m the whole of standard input is one message (split at line boundaries
            when longer than --max-message-bytes); with --lines every input line is its own
            message, sent as it arrives and in order. Invalid UTF-8 is replaced with U+FFFD.

            """ + ExitStatus.helpText
    )

    @Argument(help: "Recipient JIDs.")
    var recipients: [String]

    @Option(name: [.short, .long], help: "The message text (else standard input is read).")
    var message: String?

    @Option(help: "Upload this file (XEP-0363) and send its URL; repeat for several files.")
    var file: [String] = []

    @Flag(help: "One message per input line.")
    var lines = false

    @Option(help: "chat (default: stored and pushed to an offline phone), normal, or headline (dropped when no client of the recipient is online).")
    var type: String = "chat"

    @Option(help: "Subject of the message(s).")
    var subject: String?

    @Option(help: "Longest message body in bytes; longer input is split (--lines: longer lines are rejected).")
    var maxMessageBytes = 64 * 1024
    @Option(help: "With --lines: at most this many messages a minute; the rest of each minute go as one digest (its full text uploaded as a file where the server offers upload).")
    var maxPerMinute: Int?

    @OptionGroup var account: AccountOptions
    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = try self.log.makeLogger("xmpp-bridge.send")
        guard let kind = Message.Kind(rawValue: self.type), [.chat, .normal, .headline].contains(kind) else {
            throw ValidationError("--type must be chat, normal or headline")
        }
        guard !self.recipients.isEmpty else { throw ValidationError("give at least one recipient JID") }
        var targets: [JID] = []
        for recipient in self.recipients {
            guard let jid = try? JID(recipient) else {
                CommandLineOutput.error("invalid recipient '\(recipient)'")
                throw ExitStatus.invalidRecipient.exitCode
            }
            targets.append(jid)
        }
        if !self.file.isEmpty, self.lines { throw ValidationError("--file and --lines cannot be combined") }
        if let limit = self.maxPerMinute, !self.lines || limit < 1 { throw ValidationError("--max-per-minute needs --lines and a number of at least 1") }
        let session = try SessionRunner.makeSession(self.account, presence: nil, fetchRoster: false, reconnects: false, logger: logger)
        var events = session.events.makeAsyncIterator()
        let runner = try await SessionRunner.start(session, events: &events)
        let bounced = Task { [events] in await Self.collectBounces(events) }

        var sent = RecentIDs(capacity: 100_000)
        var failure: ExitStatus?
        do {
            if !self.file.isEmpty {
                if let caption = self.message { try await self.sendBody(caption, to: targets, via: session, ids: &sent) }
                let sender = FileSender(session: session, tls: try self.account.resolve().client.tls, logger: logger)
                if try await !sender.send(self.file, to: targets, type: kind, ids: &sent) { failure = .notDelivered }
            } else if let text = self.message {
                try await self.sendBody(text, to: targets, via: session, ids: &sent)
            } else if self.lines {
                try await self.sendLines(to: targets, via: session, ids: &sent, failure: &failure, logger: logger)
            } else {
                let input = FileHandle.standardInput.readDataToEndOfFile()
                let text = String(decoding: input, as: UTF8.self)
                for chunk in TextChunker.split(text, maxBytes: self.maxMessageBytes) where !chunk.isEmpty {
                    try await self.sendBody(chunk, to: targets, via: session, ids: &sent)
                }
            }
            // Stream management's acknowledgement where the server offers it, else a ping.
            try await session.waitForAcknowledgement()
        } catch {
            CommandLineOutput.error("not all messages were taken by the server: \(error)")
            failure = .notDelivered
        }
        await runner.stop()
        // Bounces count only for our messages and only from the recipient or its server.
        let recipients = Set(targets.map(\.bare))
        let errors = await bounced.value.filter { bounce in
            guard sent.contains(bounce.id ?? ""), let from = bounce.from else { return false }
            return recipients.contains(from.bare) || recipients.contains(where: { $0.domainpart == from.domainpart && from.localpart == nil })
        }
        var status = failure
        for error in errors {
            CommandLineOutput.error("\(error.from?.description ?? "?") refused message \(error.id ?? ""): \(error.error?.description ?? "error")")
            let noSuchRecipient: Set<StanzaError.Condition> = [.itemNotFound, .serviceUnavailable, .jidMalformed, .remoteServerNotFound]
            if let condition = error.error?.condition, noSuchRecipient.contains(condition) {
                status = status ?? .invalidRecipient
            } else {
                status = .notDelivered
            }
        }
        if let status { throw status.exitCode }
    }

    private func sendBody(_ text: String, to targets: [JID], via session: XMPPSession<ContinuousClock>, ids: inout RecentIDs) async throws {
        try await session.send(await self.messages(text, to: targets, via: session, ids: &ids))
    }

    /// One message per recipient, with ids recorded so bounced errors can be matched.
    func messages(_ text: String, to targets: [JID], via session: XMPPSession<ContinuousClock>, ids: inout RecentIDs) async -> [Message] {
        var messages: [Message] = []
        for target in targets {
            var message = Message(type: Message.Kind(rawValue: self.type) ?? .chat, to: target, body: text, subject: self.subject)
            message.id = await session.nextID()
            ids.insert(message.id ?? "")
            messages.append(message)
        }
        return messages
    }

    /// Error messages the server bounced while we were connected.
    private static func collectBounces(_ events: SessionEventStream.AsyncIterator) async -> [Message] {
        var events = events
        var errors: [Message] = []
        while let event = await events.next() {
            if case .message(let message, nil) = event, message.type == .error { errors.append(message) }
        }
        return errors
    }
}
