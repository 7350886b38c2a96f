import BridgeRouting
import BridgeState
import Foundation
import TransportCore

/// Postponing (issue 24): deliveries over a target's `max_per_minute`, or in a member's
/// quiet hours below its `min_priority`, are postponed durably and released when the
/// minute or the hours end: a minute's flood as one digest, quiet-hour deliveries as they are.
extension RelayPipeline {
    /// Moves the deliveries of `message` that wait out of `deliveries` into `proposal`.
    /// The flood gate counts a message once per target, whatever parts it was split into:
    /// all its parts go, or all wait.
    package func proposePostponements(of message: InboundMessage, _ deliveries: inout [Delivery], into proposal: inout PagingProposal) {
        let policies = self.paging.machine.policies
        guard deliveries.contains(where: { policies[$0.channel].map { $0.maxPerMinute != nil || !$0.quiet.isEmpty } ?? false }) else { return }
        let now = self.paging.now()
        var decided: [Endpoint: (until: Date, flood: Bool)?] = [:]
        var sending: [Delivery] = []
        for delivery in deliveries {
            guard let policy = policies[delivery.channel], delivery.target.address != nil else {
                sending.append(delivery)
                continue
            }
            let target = Router.normalized(delivery.target)
            if decided[target] == nil {
                let priority = policy.priority(of: message)
                if let until = policy.quiet[target]?.postponement(priority: priority, at: now) {
                    decided[target] = (until, false)
                } else if let limit = policy.maxPerMinute, let until = self.paging.gate.admit(target, limit: limit, priority: priority, at: now) {
                    decided[target] = (until, true)
                } else {
                    decided[target] = .some(nil)
                }
            }
            guard let wait = decided[target] ?? nil else {
                sending.append(delivery)
                continue
            }
            proposal.postponements.append(PostponedDeliveries.Postponement(delivery: delivery, releaseAt: wait.until, flood: wait.flood))
            proposal.entries.append(.postpone(delivery, releaseAt: wait.until, flood: wait.flood))
        }
        if sending.count < deliveries.count {
            self.logger.debug("deliveries postponed", metadata: ["count": "\(deliveries.count - sending.count)", "postponed": "\(self.paging.postponed.count)"])
        }
        deliveries = sending
    }

    /// Releases what is due: quiet-hour deliveries queued as they are, each target's
    /// flood as one digest (its full text uploaded as a file, by the service, where the
    /// target can).
    package func releasePostponed(at now: Date) {
        let (released, floods) = self.paging.postponed.due(at: now)
        if !released.isEmpty, let entries = self.sequenced(released, at: Date()) {
            self.logger.info("quiet hours over; postponed deliveries go", metadata: ["count": "\(released.count)"])
            self.appendUncommitted(entries, with: [.releasePostponed(relayIDs: released.map(\.relayID))])
        }
        for flood in floods {
            let sharing = self.paging.fileSharing[flood.target.transport]
            let text = Digest.fullText(flood.deliveries.map(\.body))
            guard let sharing, let submit = self.paging.submit else {
                self.queueDigest(flood.deliveries, url: nil, fullText: text)
                continue
            }
            submit {
                let url = await sharing.shareTextFile(text, filename: "digest.txt")
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
            // The link in the text, not as a file share (XEP-0066): a shared file's body is
            // its URL alone, and the count and first lines must show.
            digest.body = Digest.summary(postponed.map(\.body), url: url)
            digest.originalBody = digest.body
            parts = [digest]
        } else if let limit = self.stanzaLimit(first.target.transport) {
            parts = DeliverySplitter.split(digest, maxStanzaBytes: limit)
        }
        self.logger.info("flood gathered into a digest", metadata: ["target": "\(first.target)", "messages": "\(postponed.count)", "file": "\(url != nil)"])
        let now = Date()
        guard let entries = self.sequenced(parts, at: now) else { return }
        self.appendUncommitted(entries, with: [.releasePostponed(relayIDs: postponed.map(\.relayID))] + self.archiveEntries(bridgeMade: parts, at: now))
    }
}
