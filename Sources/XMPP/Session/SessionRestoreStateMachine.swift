/// What a session does after each (re)connect, one step at a time, before and right after
/// it reports itself online: enable stream management (XEP-0198 §3), fetch the roster
/// (RFC 6121 §2.2), settle in-doubt messages (XEP-0313 archive check), send initial
/// presence (RFC 6121 §4.2), report online, enable carbons if the server offers them
/// (XEP-0280 §4, found by disco XEP-0030), catch up from the archive (XEP-0313).
///
/// A resumed stream (XEP-0198 §5) kept stream management, carbons and presence on the
/// server: it reports online at once, then fetches the roster again (to be sure of our
/// copy), and the archive machine decides whether anything was missed.
///
/// It does no I/O: the session runs each ``Action/run(_:)`` step and reports how it went
/// with ``stepFinished(_:)``; a lost connection ends the sequence (``connectionLost()``).
public struct SessionRestoreStateMachine: Sendable {
    /// What the account wants restored.
    public struct Configuration: Hashable, Sendable {
        public var streamManagement: Bool
        public var carbons: Bool
        public var roster: Bool
        /// Whether the session announces a presence (a `send` session does not).
        public var presence: Bool

        public init(streamManagement: Bool, carbons: Bool, roster: Bool, presence: Bool) {
            self.streamManagement = streamManagement
            self.carbons = carbons
            self.roster = roster
            self.presence = presence
        }
    }

    /// One thing to do on the connection.
    public enum Step: Hashable, Sendable {
        /// Send `<enable/>` (the answer arrives through reading).
        case enableStreamManagement
        /// Ask the server's disco#info whether it offers carbons.
        case discoverCarbons
        /// Ask the server to send carbons.
        case enableCarbons
        /// Fetch the roster (versioned where offered).
        case fetchRoster
        /// Send our presence with caps.
        case announcePresence
        /// Tell the owner the session is online.
        case reportOnline
        /// Run the archive catch-up.
        case catchUp
        /// Look up the messages the server lost the session with in the archive and send
        /// again those it does not have, before anything new (``ArchiveCheckStateMachine``).
        case checkInDoubt
    }

    /// How a step went, as far as the sequence cares.
    public enum Outcome: Hashable, Sendable {
        case done
        /// ``Step/discoverCarbons`` found the carbons feature.
        case carbonsOffered
        /// The step failed; the sequence goes on (the reason is the runner's to log).
        case failed
    }

    public enum Action: Hashable, Sendable {
        case run(Step)
        /// Nothing more to do on this connection.
        case finished
    }

    public enum State: Hashable, Sendable {
        /// No connection yet.
        case idle
        /// `current` is under way; `remaining` follow.
        case running(current: Step, remaining: [Step])
        /// Over: every step ran (`completed`), or the connection was lost first.
        case finished(completed: Bool)
    }

    public let configuration: Configuration
    public private(set) var state: State = .idle

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// A connection is ready (bound or resumed). `offersStreamManagement`: the server
    /// advertised `urn:xmpp:sm:3` in its features; `inDoubt`: the last session was lost
    /// with messages unacknowledged; `streamManagementEnabled`, `carbonsEnabled`: the login
    /// enabled them already (Bind 2, XEP-0386).
    ///
    /// A resumed stream reports online at once: it kept everything else, and deliveries
    /// must not wait on the roster request (its answer is reported when it comes). A new
    /// session settles what is in doubt after enabling stream management (so what it sends
    /// again is counted) and before it reports online (so nothing new overtakes it).
    public mutating func connected(
        resumed: Bool, offersStreamManagement: Bool, inDoubt: Bool = false, streamManagementEnabled: Bool = false, carbonsEnabled: Bool = false
    ) -> Action {
        var steps: [Step] = []
        if resumed {
            // Left in doubt by a session lost during its own check, before anything new.
            if inDoubt { steps.append(.checkInDoubt) }
            steps.append(.reportOnline)
            if self.configuration.roster { steps.append(.fetchRoster) }
            steps.append(.catchUp)
            return self.advance(steps)
        }
        if self.configuration.streamManagement, offersStreamManagement, !streamManagementEnabled { steps.append(.enableStreamManagement) }
        // The roster before "online": the application's presence handling reads it then. Before the in-doubt
        // check too: its answer would otherwise wait behind everything sent again.
        if self.configuration.roster { steps.append(.fetchRoster) }
        if inDoubt { steps.append(.checkInDoubt) }
        if self.configuration.presence { steps.append(.announcePresence) }
        steps.append(.reportOnline)
        // Carbons only concern what the user's other clients send: not worth a delay.
        if self.configuration.carbons, !carbonsEnabled { steps.append(.discoverCarbons) }
        steps.append(.catchUp)
        return self.advance(steps)
    }

    /// The step under way ended with `outcome`.
    public mutating func stepFinished(_ outcome: Outcome) -> Action {
        switch self.state {
        case .running(let current, var remaining):
            if current == .discoverCarbons, outcome == .carbonsOffered { remaining.insert(.enableCarbons, at: 0) }
            return self.advance(remaining)
        case .idle, .finished:
            // Nothing was under way.
            return .finished
        }
    }

    /// The connection closed while restoring: no further step, and never "online".
    public mutating func connectionLost() -> Action {
        switch self.state {
        case .running, .idle:
            self.state = .finished(completed: false)
        case .finished:
            break
        }
        return .finished
    }

    private mutating func advance(_ steps: [Step]) -> Action {
        guard let next = steps.first else {
            self.state = .finished(completed: true)
            return .finished
        }
        self.state = .running(current: next, remaining: Array(steps.dropFirst()))
        return .run(next)
    }
}
