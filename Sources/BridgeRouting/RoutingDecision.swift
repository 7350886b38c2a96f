import TransportCore

/// What the router decides for one inbound message (issue 4, "Routing"): relay nothing, and
/// why, or hand these deliveries to the durable outbound queue.
package enum RoutingDecision: Hashable, Sendable {
    case drop(reason: DropReason)
    /// At least one delivery, ordered by channel, then by member, one per target endpoint.
    case deliver([Delivery])
}
