import OMEMOState

/// Where an account's OMEMO state (XEP-0384 v0.3 §5: keys, sessions; trust, §7) is kept
/// (issue 41): read once at start, and each change
/// made durable before what it concerns goes on (a message written, a message relayed).
/// The bridge keeps it in its state through the journal.
public struct OMEMOStateKeeper: Sendable {
    /// The state as kept; nil when the account has never been an OMEMO device.
    public var load: @Sendable () async throws -> OMEMOAccountState?
    /// Makes `changes` durable; returns once they are.
    public var commit: @Sendable ([OMEMOStateChange]) async throws -> Void
    /// Hands `changes` over to be made durable in order with what is handed over after
    /// them, without waiting (the journal's `record`): for what only has to be durable
    /// before the server hears a message was handled, which waits for everything before it.
    public var record: @Sendable ([OMEMOStateChange]) -> Void

    public init(
        load: @escaping @Sendable () async throws -> OMEMOAccountState?, commit: @escaping @Sendable ([OMEMOStateChange]) async throws -> Void,
        record: @escaping @Sendable ([OMEMOStateChange]) -> Void
    ) {
        self.load = load
        self.commit = commit
        self.record = record
    }

    /// Kept in memory only (tests, and a bridge run without state).
    public static func inMemory(_ initial: OMEMOAccountState? = nil) -> OMEMOStateKeeper {
        let box = OMEMOStateBox(initial)
        return OMEMOStateKeeper(load: { box.state }, commit: { box.apply($0) }, record: { box.apply($0) })
    }
}
