import Foundation

/// What the relay pipeline keeps for paging (issue 24): the pure machine, the
/// notifications accepted lately, the timer for the next repeat or escalation, and the
/// client that asks Alertmanager for silences.
struct PagingDesk: Sendable {
    var machine = PagingStateMachine()
    var accepted = NotificationDedupe()
    var gate = FloodGate()
    var postponed = PostponedDeliveries()
    /// Sleeps until `timerDue`, then calls the pipeline's tick.
    var timer: Task<Void, Never>?
    var timerDue: Date?
    var silences: (any SilenceRequesting)?
    /// The wall clock pages are timed by (a manual one in tests).
    var now: @Sendable () -> Date = { Date() }
}
