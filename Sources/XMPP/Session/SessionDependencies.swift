import Foundation
import Logging

/// What an ``XMPPSession`` is given and works with, never what it decides: its
/// configuration, how it connects and logs in (``SessionLogin``), its clock and executor,
/// its logger, and the ids it gives its own stanzas (RFC 6120 §8.1.3). Injected, so tests
/// run a session on a manual clock over an in-memory connection.
///
/// The clock is the last field: the others keep offsets fixed whatever the clock's type,
/// so the session's unspecialized code reaches them without looking up this type's
/// metadata.
struct SessionDependencies<C: Clock>: Sendable where C.Duration == Duration, C.Instant: Sendable {
    let configuration: XMPPSessionConfiguration<C>
    /// Connecting and logging in: the connector, the password, the server's login queue.
    let login: SessionLogin
    /// Where the session's own tasks (timers, IQ requests in flight) start: the account's
    /// event loop in the bridge, so a timer armed and fired there wakes no other thread
    /// (nil: the pool).
    let executor: (any TaskExecutor)?
    /// Tagged with the account.
    let logger: Logger
    /// The ids of the session's own stanzas (requests, pings, presence).
    var ids: StanzaIDGenerator
    let clock: C
}
