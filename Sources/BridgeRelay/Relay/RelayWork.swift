import BridgeRouting
import BridgeState
import Foundation
import TransportCore

/// One message on the relay path (issue 40), as each ``RelayStage`` reads and changes it:
/// what the router made of it, what goes to the queues, and what its commit carries.
package struct RelayWork: Sendable {
    package let message: InboundMessage
    /// The routing table the stages run under: the one in effect when the message is
    /// routed (``RoutingStage`` sets it), and again when it is archived (the pipeline).
    package var router: Router
    /// When it is queued (the commit's enqueue time, the archive's): the pipeline sets it
    /// once the queues have room.
    package var now: Date
    /// The ids each target knows the message this one refers to by (read from the id map
    /// before routing); empty when it refers to none.
    package var references = ReferenceMap()
    /// What the commit carries besides the deliveries: the source's position, the
    /// deduplication key, paging, the archive. Committed even when no stage lets the
    /// message through.
    package var bookkeeping: [JournalEntry]
    /// The router's deliveries, each with the whole text.
    package var routed: [Delivery] = []
    /// What goes to the queues: `routed` split to fit, without what waits.
    package var deliveries: [Delivery] = []
    /// What paging changes in memory once the commit is done.
    package var proposal: PagingProposal

    package init(message: InboundMessage, router: Router, now: Date = Date(), bookkeeping: [JournalEntry] = [], proposal: PagingProposal = PagingProposal()) {
        self.message = message
        self.router = router
        self.now = now
        self.bookkeeping = bookkeeping
        self.proposal = proposal
    }
}
