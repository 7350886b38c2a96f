import BridgeRouting

/// What a stage says of a message (issue 40): on, or relayed no further.
package enum StageOutcome: Equatable, Sendable {
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
    mutating func run(_ work: inout RelayWork) -> StageOutcome
}
