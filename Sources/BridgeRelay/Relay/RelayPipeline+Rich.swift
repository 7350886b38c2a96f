import BridgeRouting
import BridgeState
import Foundation
import TransportCore
import XMPP

/// Rich messages (issue 12): the id map put to work for corrections, replies, reactions and
/// retractions; receipts passed back to the original sender; the notice to senders of
/// encrypted messages.
extension RelayPipeline {
    /// The ids each target knows the message `message` refers to by; empty when it refers to
    /// none, or the id map cannot be read (then it is relayed as a new message). Read on the
    /// journal's thread after the commits under way: the message referred to may have come
    /// just before.
    ///
    /// Only a sending member's references are looked up (a stranger costs no database
    /// read). A correction or retraction applies only to the sender's own message; in a
    /// room, one with the same nick.
    package func references(for message: InboundMessage) async -> ReferenceMap {
        let source = Router.normalized(message.source)
        guard let id = message.content.references, !self.routing.router.sendingChannels(of: source).isEmpty || self.routing.router.relaysThroughGateway(source) else {
            return ReferenceMap()
        }
        let ownOnly = message.content.replaceID != nil || message.content.retractID != nil
        let from = message.source
        let nick = ownOnly && self.routing.router.isRoom(source) ? message.nick : nil
        do {
            return try await self.journal.read { store throws(StateStoreError) in try store.references(to: id, from: from, ownOnly: ownOnly, nick: nick) }
        } catch {
            self.logger.error("cannot read the id map; reference not mapped", metadata: ["error": "\(error)"])
            return ReferenceMap()
        }
    }

    /// Tells the sender of an encrypted message, once per conversation per day, that it was
    /// not relayed; strangers are not answered.
    package func noticeEncrypted(_ message: InboundMessage, now: Date = Date()) {
        guard var notice = self.routing.router.encryptionNotice(for: message, relayID: self.routing.ids.next()) else { return }
        // Its own source id: a later reference to the sender's message must not find the notice.
        notice.sourceID = "notice:\(message.id)"
        guard self.routing.encryptionNotices.shouldNotify(message.source, now: now) else {
            self.logger.debug("encrypted message not relayed; sender told earlier today", metadata: ["from": "\(message.source)"])
            return
        }
        self.logger.notice("encrypted message not relayed; telling the sender", metadata: ["from": "\(message.source)", "encryption": "\(message.content.encryption ?? "")"])
        self.enqueueGenerated([notice])
    }

    /// A receipt or displayed marker for the copy `record` is passed back to the original
    /// sender, under its own id, when the channel asks for it (`receipts`, on by default for
    /// 1:1 links) and the sender is an XMPP contact (local sources get an event instead).
    /// Each (kind, message) goes back once, though its copies (caption and file, split parts)
    /// and the recipient's devices may each send one; and only to a sender who is still a
    /// receiving member of the channel.
    package func passBack(_ receipt: DeliveryReceipt, for record: RelayRecord) {
        guard record.sourceAddress != nil else { return }
        let source = Router.normalized(record.source)
        if self.routing.router.isGatewayChannel(record.channel) {
            // Through a gateway, both sides are one conversation: receipts always go back.
            guard self.routing.router.relaysThroughGateway(source) else { return }
        } else {
            guard let channel = self.routing.router.channels.first(where: { $0.name == record.channel }),
                self.routing.router.passesReceiptsBack(in: channel, to: source)
            else { return }
        }
        let alreadyReceived = receipt.displayed ? record.displayedAt != nil : record.receivedAt != nil
        let key = "\(receipt.displayed ? "displayed" : "received") \(source) \(record.sourceID)"
        guard !alreadyReceived, self.repeats.passBack(key) else { return }
        let receiptCopy = Delivery(
            channel: record.channel, target: source, body: "", originalBody: "", nick: "", type: .chat, source: record.target,
            // Its own source id: a later reference to the copy must not find the receipt.
            sourceID: "receipt:\(receipt.relayID)", relayID: self.routing.ids.next(),
            content: MessageContent(receiptFor: record.sourceID, receiptDisplayed: receipt.displayed ? true : nil)
        )
        self.enqueueGenerated([receiptCopy])
    }

    /// Queues deliveries the bridge makes itself (notices, receipts passed back): committed
    /// in the next group, then handed to their workers, like any relayed message.
    package func enqueueGenerated(_ generated: [Delivery]) {
        let now = Date()
        guard let entries = self.sequenced(generated, at: now) else { return }
        self.appendUncommitted(entries, with: self.archiving.entries(bridgeMade: generated, at: now, router: self.routing.router))
    }
}
