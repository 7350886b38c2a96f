import BridgeRouting
import BridgeState
import Foundation
import XMPP

/// The relay path's routing stage (issue 3, issue 40): the routing table in effect and the
/// relay ids it gives the copies; the pure ``Router`` picks the targets (members only, no
/// loops). Also who was told lately that encrypted messages are not relayed (issue 12).
package struct RoutingStage: RelayStage, Sendable {
    /// The routing table (replaced on reload and runtime route changes).
    package var router: Router
    /// Relay ids: every copy's, and the bridge's own messages'.
    package var ids: StanzaIDGenerator
    package var encryptionNotices = EncryptionNotices()

    package init(router: Router, ids: StanzaIDGenerator) {
        self.router = router
        self.ids = ids
    }

    /// Routes the message to `routed`; stops it when the router drops it (strangers and
    /// non-members are never relayed: no open relay).
    package mutating func run(_ work: inout RelayWork) -> StageOutcome {
        work.router = self.router
        switch self.router.route(work.message, references: work.references, makeID: { self.ids.next() }) {
        case .drop(let reason):
            return .stop(reason)
        case .deliver(let deliveries):
            work.routed = deliveries
            return .next
        }
    }
}
