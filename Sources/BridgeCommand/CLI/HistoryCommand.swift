import ArgumentParser
import Bridge
import BridgeState
import Foundation
import LocalArchive
import TransportCore
import XMPP

/// `xmpp-bridge history [CHANNEL]`: the local archive (issue 25), through the running
/// daemon's control socket, or on the state database when none runs. Text (escaped like
/// other text output, oldest first; a search best first) or JSON lines.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show archived messages: the newest, a time range, a sender's, or a full-text search."
    )

    @Argument(help: "Only this channel.")
    var channel: String?
    @Option(help: "From this time: an age (90s, 30m, 2h, 7d, 2w) or a date/time (2026-11-26, 2026-11-26T10:00, with Z or +01:00; UTC otherwise).")
    var since: String?
    @Option(help: "Before this time (the same forms).")
    var until: String?
    @Option(help: "Words that must all appear (case and accents ignored; word* for a prefix); the best matches first.")
    var search: String?
    @Option(help: "Only from this sender: a bare JID (any resource), a full address, a nick or a local name.")
    var from: String?
    @Option(help: "At most this many messages (1 to 10000).")
    var limit = 100
    @Flag(help: "One JSON object per line.")
    var json = false
    @Option(help: "The configuration file.")
    var config: String?

    func validate() throws {
        guard (1...ArchiveQuery.maximumLimit).contains(self.limit) else { throw ValidationError("--limit must be from 1 to \(ArchiveQuery.maximumLimit)") }
        let now = Date()
        if let since, ArchiveTime.parse(since, now: now) == nil { throw ValidationError("--since: cannot read '\(since)' as an age (2h) or a time (2026-11-26T10:00)") }
        if let until, ArchiveTime.parse(until, now: now) == nil { throw ValidationError("--until: cannot read '\(until)' as an age (2h) or a time (2026-11-26T10:00)") }
        if let search, ArchiveSearch.expression(search) == nil { throw ValidationError("--search has no word to look for") }
    }

    func run() async throws {
        let now = Date()
        var request = ControlRequest(op: .history, channel: self.channel, address: self.from)
        request.since = self.since.flatMap { ArchiveTime.parse($0, now: now) }
        request.until = self.until.flatMap { ArchiveTime.parse($0, now: now) }
        request.search = self.search
        request.limit = self.limit
        let response = try await RouteCommand.send(request, config: self.config)
        // Newest first from the archive; a listing reads oldest first, a search best first.
        let messages = self.search == nil ? (response.history ?? []).reversed() : response.history ?? []
        for message in messages {
            CommandLineOutput.line(self.json ? message.jsonLine : Self.text(message))
        }
        if messages.isEmpty, !self.json { CommandLineOutput.error("no archived message matches") }
    }

    /// One line: time (UTC), channel, nick, text, and what changed it.
    static func text(_ message: ArchivedMessage) -> String {
        var line = "\(Self.time(message.at))  [\(VisibleText.escaped(message.channel))] \(VisibleText.escaped(message.nick, newline: " ")): "
        if message.retractedAt != nil {
            line += "(retracted)"
        } else {
            line += VisibleText.escaped(message.body, newline: " ⏎ ")
            if let url = message.content.url, !message.body.contains(url) { line += " " + VisibleText.escaped(url) }
            if message.editedAt != nil { line += "  (edited)" }
        }
        return line
    }

    /// `2026-11-26 10:00:05` in UTC.
    static func time(_ date: Date) -> String {
        String(StorageTimestamp.text(date).prefix(19))
    }
}
