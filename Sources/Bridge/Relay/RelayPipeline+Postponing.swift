import Foundation
import TransportCore
import Transports

/// Postponing (issue 24): deliveries over a target's `max_per_minute`, or in a member's
/// quiet hours below its `min_priority`, are postponed durably and released when the minute or
/// the hours end: a minute's flood as one digest, quiet-hour deliveries as they are.
extension RelayPipeline {
    /// Splits `deliveries` of `message` into those that go now and the journal entries
    /// that postpone the others.
    func postpone(_ deliveries: [Delivery], of message: InboundMessage) -> (sending: [Delivery], postponed: [JournalEntry]) {
        let policies = self.paging.machine.policies
        guard deliveries.contains(where: { policies[$0.channel].map { $0.maxPerMinute != nil || !$0.quiet.isEmpty } ?? false }) else {
            return (deliveries, [])
        }
        let now = self.paging.now()
        var sending: [Delivery] = []
        var postponed: [JournalEntry] = []
        for delivery in deliveries {
            guard let policy = policies[delivery.channel], delivery.target.address != nil else {
                sending.append(delivery)
                continue
            }
            let target = Router.normalized(delivery.target)
            let priority = policy.priority(of: message)
            var postponement: PostponedDeliveries.Postponement?
            if let until = policy.quiet[target]?.postponement(priority: priority, at: now) {
                postponement = PostponedDeliveries.Postponement(delivery: delivery, releaseAt: until, flood: false)
            } else if let limit = policy.maxPerMinute, let until = self.paging.gate.admit(target, limit: limit, priority: priority, at: now) {
                postponement = PostponedDeliveries.Postponement(delivery: delivery, releaseAt: until, flood: true)
            }
            guard let postponement else {
                sending.append(delivery)
                continue
            }
            self.paging.postponed.add(postponement)
            postponed.append(.postpone(postponement.delivery, releaseAt: postponement.releaseAt, flood: postponement.flood))
        }
        if !postponed.isEmpty {
            self.logger.debug("deliveries postponed", metadata: ["count": "\(postponed.count)", "postponed": "\(self.paging.postponed.count)"])
            self.reschedulePaging()
        }
        return (sending, postponed)
    }

    /// Releases what is due: quiet-hour deliveries queued as they are, each target's
    /// flood as one digest (its full text uploaded as a file where the target can).
    func releasePostponed(at now: Date) {
        let (released, floods) = self.paging.postponed.due(at: now)
        if !released.isEmpty, let entries = self.sequenced(released, at: Date()) {
            self.logger.info("quiet hours over; postponed deliveries go", metadata: ["count": "\(released.count)"])
            self.appendUncommitted(entries, with: [.releasePostponed(relayIDs: released.map(\.relayID))])
        }
        for flood in floods {
            let sharing = self.workers[flood.target.transport]?.transport as? any TextFileSharing
            let text = Digest.fullText(flood.deliveries.map(\.body))
            Task {
                let url = await sharing?.shareTextFile(text, filename: "digest.txt")
                await self.queueDigest(flood.deliveries, url: url, fullText: text)
            }
        }
        self.paging.gate.forget(before: now)
    }

    /// Queues the digest of `postponed` (one target's flood) and releases them in the same commit.
    private func queueDigest(_ postponed: [Delivery], url: String?, fullText: String) {
        guard let first = postponed.first else { return }
        let relayID = self.ids.next()
        var digest = Delivery(
            channel: first.channel, target: first.target, body: fullText, originalBody: fullText, nick: "xmpp-bridge", type: first.type,
            source: Endpoint(transport: "paging"), sourceID: relayID, relayID: relayID
        )
        var parts = [digest]
        if let url {
            digest.body = Digest.summary(postponed.map(\.body), url: url)
            // The link in the text, not as a file share (XEP-0066): a shared file's body is
            // its URL alone, and the count and first lines must show.
            digest.originalBody = digest.body
            parts = [digest]
        } else if let limit = self.stanzaLimit(first.target.transport) {
            parts = DeliverySplitter.split(digest, maxStanzaBytes: limit)
        }
        self.logger.info("flood gathered into a digest", metadata: ["target": "\(first.target)", "messages": "\(postponed.count)", "file": "\(url != nil)"])
        guard let entries = self.sequenced(parts, at: Date()) else { return }
        self.appendUncommitted(entries, with: [.releasePostponed(relayIDs: postponed.map(\.relayID))])
    }
}
