import BridgeState
import Foundation
import Logging
import TransportCore

/// What the relay pipeline keeps for paging (issue 24): the pure machine, the
/// notifications accepted lately, the flood gate and postponed deliveries, and the
/// ``PagingService``'s wake and job queue.
package struct PagingDesk: Sendable {
    package var machine = PagingStateMachine()
    package var accepted = NotificationDedupe()
    package var gate = FloodGate()
    package var postponed = PostponedDeliveries()
    package var silences: (any SilenceRequesting)?
    /// Wakes the service's timer when the next due time may have moved.
    package var wake: PagingWake?
    /// Runs a request off the relay path (in the service's task group).
    package var submit: (@Sendable (@escaping @Sendable () async -> Void) -> Void)?
    /// When pages and accepted notifications past their time are next forgotten (hourly).
    package var nextPrune: Date?
    /// The wall clock pages are timed by (a manual one in tests).
    package var now: @Sendable () -> Date = { Date() }
    /// Per transport, how it shares a flood's full text as a file (XMPP accounts,
    /// XEP-0363); a digest for a transport without links to nothing.
    package var fileSharing: [String: any TextFileSharing] = [:]
    package let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }
}
