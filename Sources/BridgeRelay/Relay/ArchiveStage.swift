import BridgeRouting
import BridgeState
import Foundation
import LocalArchive
import TransportCore

/// The relay path's archiving stage (issue 25, issue 40): what a channel relays goes into
/// the local archive in the same commit as its deliveries (a journal entry beside the
/// enqueues, no commit of its own), and every ``archiveIndexBatch`` archived messages the
/// full-text index takes them in one batch. Reading and pruning never happen here.
package struct ArchiveStage: RelayStage, Sendable {
    /// Messages archived since the last `.indexArchive`.
    private var sinceIndex = 0

    package init() {}

    /// The archive's entries for the message go into its commit.
    package mutating func run(_ work: inout RelayWork) -> StageOutcome {
        work.bookkeeping += self.entries(for: work.message, routed: work.routed, at: work.now, router: work.router)
        return .next
    }

    /// The archive's entries for `message`, which the router relays as `routed`: one per
    /// channel that keeps an archive; a correction or retraction changes the entries of the
    /// message it refers to instead; a receipt or marker is not a message.
    package mutating func entries(for message: InboundMessage, routed: [Delivery], at now: Date, router: Router) -> [JournalEntry] {
        let archived = router.archivedChannels
        guard !archived.isEmpty else { return [] }
        let content = message.content
        guard content.receiptFor == nil else { return [] }
        let source = Router.normalized(message.source)
        if let edited = content.replaceID ?? content.retractID {
            // A correction or retraction changes the message it refers to, in its channels.
            var channels: [String] = []
            for delivery in routed where archived.contains(delivery.channel) && !channels.contains(delivery.channel) { channels.append(delivery.channel) }
            guard !channels.isEmpty else { return [] }
            let body = content.replaceID != nil ? message.body ?? "" : nil
            let nick = router.isRoom(source) ? message.nick : nil
            return [.archiveEdit(channels: channels, source: source, nick: nick, sourceID: edited, body: body, at: now)]
        }
        // Per archived channel, in routing order; a message reaches few channels, so a
        // search of the short list beats a dictionary here, on every message.
        var channels: [(name: String, copies: [ArchivedMessage.Copy])] = []
        for delivery in routed where archived.contains(delivery.channel) {
            let copy = ArchivedMessage.Copy(target: delivery.target, id: delivery.relayID)
            if let at = channels.firstIndex(where: { $0.name == delivery.channel }) {
                channels[at].copies.append(copy)
            } else {
                channels.append((delivery.channel, [copy]))
            }
        }
        return self.indexedEvery(
            channels.map { channel in
                .archive(
                    ArchiveRow(
                        at: now, channel: channel.name, source: source, sender: message.sender, nick: message.nick, sourceID: message.id,
                        // The sender's own text: the channel's `replace` rules changed only the copies.
                        body: message.body ?? message.subject ?? "", subject: message.subject, content: content, copies: channel.copies,
                        bridgeMade: message.isOccupantNotice
                    )
                )
            }
        )
    }

    /// The archive's entries for what the bridge says itself (notices, digests, paging
    /// answers): one per channel and text, with every copy of it.
    package mutating func entries(bridgeMade deliveries: [Delivery], at now: Date, router: Router) -> [JournalEntry] {
        let archived = router.archivedChannels
        guard !archived.isEmpty else { return [] }
        var messages: [ArchivedMessage] = []
        var index: [String: Int] = [:]
        for delivery in deliveries where archived.contains(delivery.channel) && delivery.content.receiptFor == nil {
            let copy = ArchivedMessage.Copy(target: delivery.target, id: delivery.relayID)
            let key = delivery.channel + "\u{1F}" + delivery.originalBody
            if let at = index[key] {
                messages[at].copies.append(copy)
                continue
            }
            index[key] = messages.count
            var content = delivery.content
            content.replyTo = nil  // the copy's own reference, not the message's
            messages.append(
                ArchivedMessage(
                    at: now, channel: delivery.channel, source: delivery.source, sender: "xmpp-bridge", nick: "xmpp-bridge",
                    sourceID: delivery.relayID, body: delivery.originalBody, content: content, copies: [copy], bridgeMade: true
                )
            )
        }
        return self.indexedEvery(messages.map { .archive($0) })
    }

    /// Messages archived before the full-text index takes them in one batch: FTS5 (no token
    /// counts, eight segments merged at once: v15) costs about 1 µs a message in batches of
    /// ten thousand, ten times that a few at a time (Python's sqlite3 on the system SQLite);
    /// searches and the hourly keeper index what is left.
    package static var archiveIndexBatch: Int { 10_000 }

    /// `entries`, and every ``archiveIndexBatch`` archived messages an `.indexArchive` after them.
    private mutating func indexedEvery(_ entries: [JournalEntry]) -> [JournalEntry] {
        self.sinceIndex += entries.count
        guard self.sinceIndex >= Self.archiveIndexBatch else { return entries }
        self.sinceIndex = 0
        return entries + [.indexArchive]
    }
}
