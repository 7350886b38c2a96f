import Foundation
import TransportCore

/// The local archive on the relay path (issue 25): what a channel relays goes into the
/// archive in the same commit as its deliveries (a journal entry beside the enqueues, no
/// commit of its own). Reading and pruning never happen here.
extension RelayPipeline {
    /// The archive's entries for `message`, which the router relays as `routed`: one per
    /// channel that keeps an archive; a correction or retraction changes the entries of the
    /// message it refers to instead; a receipt or marker is not a message.
    func archiveEntries(for message: InboundMessage, routed: [Delivery], at now: Date) -> [JournalEntry] {
        let archived = self.router.archivedChannels
        guard !archived.isEmpty, routed.contains(where: { archived.contains($0.channel) }) else { return [] }
        let content = message.content
        guard content.confirms == nil else { return [] }
        let source = Router.normalized(message.source)
        if let replaced = content.replaceID {
            return [.archiveEdit(source: source, sourceID: replaced, body: message.body ?? "", at: now)]
        }
        if let retracted = content.retractID {
            return [.archiveEdit(source: source, sourceID: retracted, body: nil, at: now)]
        }
        var entries: [JournalEntry] = []
        var index: [String: Int] = [:]
        for delivery in routed where archived.contains(delivery.channel) {
            let copy = ArchivedMessage.Copy(target: delivery.target, id: delivery.relayID)
            if let at = index[delivery.channel], case .archive(var entry) = entries[at] {
                entry.copies.append(copy)
                entries[at] = .archive(entry)
                continue
            }
            index[delivery.channel] = entries.count
            entries.append(
                .archive(
                    ArchivedMessage(
                        at: now, channel: delivery.channel, source: source, sender: message.sender, nick: message.nick, sourceID: message.id,
                        // The sender's own text: the channel's `replace` rules changed only the copies.
                        body: message.body ?? message.subject ?? "", subject: message.subject, content: content, copies: [copy],
                        bridgeMade: message.isOccupantNotice
                    )
                )
            )
        }
        return entries
    }

    /// The archive's entries for what the bridge says itself (notices, digests, paging
    /// answers): one per channel and text, with every copy of it.
    func archiveEntries(bridgeMade deliveries: [Delivery], at now: Date) -> [JournalEntry] {
        let archived = self.router.archivedChannels
        guard !archived.isEmpty else { return [] }
        var messages: [ArchivedMessage] = []
        var index: [String: Int] = [:]
        for delivery in deliveries where archived.contains(delivery.channel) && delivery.content.confirms == nil {
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
        return messages.map { .archive($0) }
    }

    /// Each archived channel's retention in days (0: for ever), for ``ArchivePruner``.
    func archiveRetention() -> [String: Int] {
        var days: [String: Int] = [:]
        for channel in self.router.channels where channel.archives { days[channel.name] = channel.archiveDays }
        return days
    }

    /// Whether `transport` is a member (any direction) of `channel` now.
    func isMember(_ transport: String, of channel: String) -> Bool {
        self.router.channels.contains { $0.name == channel && $0.members.contains { $0.endpoint.transport == transport } }
    }
}
