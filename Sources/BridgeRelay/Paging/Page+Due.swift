import BridgeState
import Foundation

/// When a page is due again under its channel's policy (issue 24): the policy is paging's,
/// the page a record of the state.
extension Page {
    /// When it is to be repeated or escalated next under `policy`; nil when never.
    package func nextDue(under policy: PagingPolicy) -> Date? {
        guard self.isOpen, policy.escalates(priority: self.priority) else { return nil }
        var due: [Date] = []
        if self.tier < policy.tiers.count {
            due.append(self.tierSince.addingTimeInterval(policy.tiers[self.tier].after.seconds))
        }
        if let repeatInterval = policy.repeatInterval {
            due.append(self.lastSent.addingTimeInterval(repeatInterval.seconds))
        }
        return due.min()
    }
}
