import BridgeState
import Foundation
import TransportCore

/// What the relay pipeline keeps for paging (issue 24): the pure machine, the
/// notifications accepted lately, the flood gate and postponed deliveries, and the
/// ``PagingService``'s wake and job queue.
struct PagingDesk: Sendable {
    var machine = PagingStateMachine()
    var accepted = NotificationDedupe()
    var gate = FloodGate()
    var postponed = PostponedDeliveries()
    var silences: (any SilenceRequesting)?
    /// Wakes the service's timer when the next due time may have moved.
    var wake: PagingWake?
    /// Runs a request off the relay path (in the service's task group).
    var submit: (@Sendable (@escaping @Sendable () async -> Void) -> Void)?
    /// When pages and accepted notifications past their time are next forgotten (hourly).
    var nextPrune: Date?
    /// The wall clock pages are timed by (a manual one in tests).
    var now: @Sendable () -> Date = { Date() }
    /// Per transport, how it shares a flood's full text as a file (XMPP accounts,
    /// XEP-0363); a digest for a transport without links to nothing.
    var fileSharing: [String: any TextFileSharing] = [:]
}
