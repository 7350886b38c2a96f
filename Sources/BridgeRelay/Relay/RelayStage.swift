import BridgeRouting
import BridgeState
import Foundation
import TransportCore

/// One message on the relay path (issue 40), as each ``RelayStage`` reads and changes it:
/// what the router made of it, what goes to the queues, and what its commit carries.
package struct RelayWork: Sendable {
    package let message: InboundMessage
    /// The routing table in effect when the message arrived.
    package let router: Router
    /// When it is queued (the commit's enqueue time, the archive's): set once it has room.
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

    package init(message: InboundMessage, router: Router, now: Date, bookkeeping: [JournalEntry] = [], proposal: PagingProposal = PagingProposal()) {
        self.message = message
        self.router = router
        self.now = now
        self.bookkeeping = bookkeeping
        self.proposal = proposal
    }
}

/// What a stage says of a message.
package enum RelayStep: Equatable, Sendable {
    /// On to the next stage.
    case next
    /// Relayed no further: why (a drop reason), or nil when the bridge took it itself (a
    /// paged person's ack).
    case stop(DropReason?)
}

/// One step of the relay path with one job (issue 40): the repeat check, routing,
/// splitting, the paging gate and archiving. A stage is a value without I/O; the pipeline
/// runs them in order over a message's ``RelayWork`` and does what waits between them
/// itself (the id map, room in the queues, the commit).
package protocol RelayStage {
    mutating func run(_ work: inout RelayWork) -> RelayStep
}
