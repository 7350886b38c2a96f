import BridgeRouting
import BridgeState
import Foundation
import TransportCore

/// Postponing (issue 24): deliveries over a target's `max_per_minute`, or in a member's
/// quiet hours below its `min_priority`, are postponed durably (the paging gate,
/// ``PagingDesk/run(_:)``) and released here when the minute or the hours end: a minute's
/// flood as one digest, quiet-hour deliveries as they are.
extension RelayPipeline {
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
        let relayID = self.routing.ids.next()
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
        } else if let limit = self.splitting.limits[first.target.transport] {
            parts = DeliverySplitter.split(digest, maxStanzaBytes: limit)
        }
        self.logger.info("flood gathered into a digest", metadata: ["target": "\(first.target)", "messages": "\(postponed.count)", "file": "\(url != nil)"])
        let now = Date()
        guard let entries = self.sequenced(parts, at: now) else { return }
        self.appendUncommitted(entries, with: [.releasePostponed(relayIDs: postponed.map(\.relayID))] + self.archiving.entries(bridgeMade: parts, at: now, router: self.routing.router))
    }
}
