import BridgeRouting
import BridgeState
import Foundation
import TransportCore

/// The paging gate on the relay path (issue 24, issue 40): a resolved notification's
/// replies before splitting (``resolve(_:)``), then, as a ``RelayStage`` after splitting,
/// what waits (a flood over `max_per_minute`, quiet hours) and the page a local alert
/// opens. What it changes goes into the work's proposal, taken into memory once the
/// commit is done.
extension PagingDesk: RelayStage {
    /// A RESOLVED notification goes as a reply to the copy of its FIRING message each
    /// recipient got (XEP-0461), and ends that alert's escalation (once committed).
    package func resolve(_ work: inout RelayWork) {
        guard let notification = work.message.notification, notification.isResolved, let channel = work.message.channel,
            let (page, replies) = self.machine.resolution(of: notification.threadKey, channel: channel)
        else { return }
        for index in work.routed.indices {
            if let copy = replies[Router.normalized(work.routed[index].target)] { work.routed[index].content.replyTo = copy }
        }
        work.proposal.pages.append(page)
        work.proposal.entries.append(.page(page))
    }

    /// Postpones what waits, then opens the page of a local alert.
    package mutating func run(_ work: inout RelayWork) -> StageOutcome {
        self.postpone(&work)
        self.openPage(&work)
        return .next
    }

    /// Moves the deliveries that wait out of `work.deliveries` into its proposal. The
    /// flood gate counts a message once per target, whatever parts it was split into: all
    /// its parts go, or all wait.
    private mutating func postpone(_ work: inout RelayWork) {
        let policies = self.machine.policies
        guard work.deliveries.contains(where: { policies[$0.channel].map { $0.maxPerMinute != nil || !$0.quiet.isEmpty } ?? false }) else { return }
        let now = self.now()
        var decided: [Endpoint: (until: Date, flood: Bool)?] = [:]
        var sending: [Delivery] = []
        for delivery in work.deliveries {
            guard let policy = policies[delivery.channel], delivery.target.address != nil else {
                sending.append(delivery)
                continue
            }
            let target = Router.normalized(delivery.target)
            if decided[target] == nil {
                let priority = policy.priority(of: work.message)
                if let until = policy.quiet[target]?.postponement(priority: priority, at: now) {
                    decided[target] = (until, false)
                } else if let limit = policy.maxPerMinute, let until = self.gate.admit(target, limit: limit, priority: priority, at: now) {
                    decided[target] = (until, true)
                } else {
                    decided[target] = .some(nil)
                }
            }
            guard let wait = decided[target] ?? nil else {
                sending.append(delivery)
                continue
            }
            work.proposal.postponements.append(PostponedDeliveries.Postponement(delivery: delivery, releaseAt: wait.until, flood: wait.flood))
            work.proposal.entries.append(.postpone(delivery, releaseAt: wait.until, flood: wait.flood))
        }
        if sending.count < work.deliveries.count {
            self.logger.debug("deliveries postponed", metadata: ["count": "\(work.deliveries.count - sending.count)", "postponed": "\(self.postponed.count)"])
        }
        work.deliveries = sending
    }

    /// The page for an alert a local input sent into a paging channel: `routed` are its
    /// deliveries before splitting (the whole text), `deliveries` after (every part's
    /// relay id is a copy a reply may name).
    private func openPage(_ work: inout RelayWork) {
        guard work.message.source.address == nil, work.message.notification?.isResolved != true,
            work.deliveries.contains(where: { self.machine.policy($0.channel) != nil })
                || work.proposal.postponements.contains(where: { self.machine.policy($0.delivery.channel) != nil })
        else { return }
        let message = work.message
        let postponed = Set(work.proposal.postponements.map { Router.normalized($0.delivery.target) })
        for (channel, group) in Dictionary(grouping: work.deliveries + work.proposal.postponements.map(\.delivery), by: \.channel) {
            // Recipients are people: account contacts, not rooms or local outputs.
            let copies = group.filter { $0.target.address != nil && !work.router.isRoom(Router.normalized($0.target)) }
                .map { (relayID: $0.relayID, target: Router.normalized($0.target)) }
            let text = work.routed.first { $0.channel == channel && $0.target.address != nil }?.body ?? ""
            guard let page = self.machine.page(for: message, channel: channel, text: text, copies: copies, postponed: postponed, at: self.now())
            else { continue }
            work.proposal.pages.append(page)
            work.proposal.entries.append(.page(page))
        }
    }
}
