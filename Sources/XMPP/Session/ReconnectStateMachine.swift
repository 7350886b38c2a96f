/// When to (re)connect after a failed attempt or a lost session: exponential backoff
/// with jitter for transient failures, an immediate stop for permanent ones.
///
/// RFC 6120 §3.3 and §4.9.3 leave reconnection to the client; this follows the usual
/// practice. A permanent failure — credentials refused, certificate rejected, no
/// STARTTLS where TLS is required, a configuration that cannot work — is reported with
/// ``Action/giveUp(_:)`` and not retried by the machine, because retrying would repeat it
/// (and may lock the account); the owner can start a new machine (SIGHUP, `reconnect`).
/// A stream `conflict` (another client took the resource) or `policy-violation` (e.g. a
/// stanza over the server's limit) backs off like any transient failure: the other client
/// may leave, and the next session may not repeat the stanza. See ``isPermanent(_:)``.
///
/// The schedule: the first attempt after ``start()`` is immediate. After `n`
/// consecutive failed attempts (n ≥ 1) the next waits
/// `min(maximumDelay, initialDelay · multiplier^(n-1)) · (1 + r)`, `r` drawn from
/// `[-jitter, +jitter]`: 1, 2, 4, …, 60, 60 s with the defaults. When an established
/// session is lost, the first attempt waits `initialDelay` (jittered, so clients cut
/// off by one server restart do not all return at once); if it fails the schedule
/// starts again from `initialDelay`. ``connectSucceeded()`` resets the count.
///
/// It does no I/O and reads no clock: the owner passes `now`, arms a timer for
/// ``Action/wait(until:)`` and calls ``timerFired(now:)``. Randomness is injected.
public struct ReconnectStateMachine<C: Clock>: Sendable where C.Instant: Sendable, C.Duration == Swift.Duration {
    /// The backoff policy.
    public struct Configuration: Hashable, Sendable {
        /// The wait after the first failure (and before the first attempt after a loss).
        public var initialDelay: Duration
        /// The cap on the un-jittered wait.
        public var maximumDelay: Duration
        /// Growth of the wait per consecutive failure; values below 1 count as 1.
        public var multiplier: Double
        /// Relative spread of each wait: 0.2 means ±20 %; clamped to `0...1`.
        public var jitter: Double
        /// Give up after this many consecutive failed attempts; nil retries forever.
        public var maximumAttempts: Int?

        public init(
            initialDelay: Duration = .seconds(1),
            maximumDelay: Duration = .seconds(60),
            multiplier: Double = 2.0,
            jitter: Double = 0.2,
            maximumAttempts: Int? = nil
        ) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
            self.multiplier = multiplier
            self.jitter = jitter
            self.maximumAttempts = maximumAttempts
        }
    }

    public enum State: Hashable, Sendable {
        /// Not started.
        case idle
        /// A connection attempt is under way, after `attempt` consecutive failures.
        case connecting(attempt: Int)
        /// The session is established.
        case connected
        /// Waiting until `until` before making the attempt that follows `attempt` failures.
        case waiting(attempt: Int, until: C.Instant)
        /// Stopped by the owner (nil) or given up on this error.
        case stopped(XMPPClientError?)
    }

    public enum Action: Hashable, Sendable {
        /// Nothing to do.
        case none
        /// Start a connection attempt now.
        case connect
        /// Arm a timer and call ``ReconnectStateMachine/timerFired(now:)`` at `until`.
        case wait(until: C.Instant)
        /// Stop trying and report this error.
        case giveUp(XMPPClientError)
    }

    public private(set) var state: State = .idle
    public let configuration: Configuration
    private let random: @Sendable (ClosedRange<Double>) -> Double

    /// - Parameter random: draws a value in the given range for jitter (e.g.
    ///   `{ Double.random(in: $0) }`); tests pass a deterministic one.
    public init(configuration: Configuration = Configuration(), random: @escaping @Sendable (ClosedRange<Double>) -> Double) {
        self.configuration = configuration
        self.random = random
    }

    // MARK: - Events

    /// The owner wants to be connected. Also restarts after ``stop()`` or a give-up.
    public mutating func start() -> Action {
        switch self.state {
        case .idle, .stopped:
            self.state = .connecting(attempt: 0)
            return .connect
        case .connecting, .connected, .waiting:
            return .none
        }
    }

    /// The attempt produced a ready session; the backoff starts again from the beginning.
    public mutating func connectSucceeded() -> Action {
        switch self.state {
        case .connecting:
            self.state = .connected
            return .none
        case .idle, .connected, .waiting, .stopped:
            return .none
        }
    }

    /// The attempt failed before the session was ready.
    public mutating func connectFailed(_ error: XMPPClientError, now: C.Instant) -> Action {
        switch self.state {
        case .connecting(let attempt):
            return self.failed(error, failures: attempt + 1, now: now)
        case .idle, .connected, .waiting, .stopped:
            return .none
        }
    }

    /// The established session ended without ``stop()``.
    ///
    /// - Parameter error: why, when known; a permanent error gives up instead of waiting.
    public mutating func connectionLost(_ error: XMPPClientError? = nil, now: C.Instant) -> Action {
        switch self.state {
        case .connected:
            if let error, Self.isPermanent(error) { return self.giveUp(error) }
            return self.scheduleAttempt(after: 0, delayIndex: 0, now: now)
        case .connecting(let attempt):
            // Reported while the attempt was still under way: that attempt failed.
            return self.failed(error ?? .closedByServer, failures: attempt + 1, now: now)
        case .idle, .waiting, .stopped:
            return .none
        }
    }

    /// The timer armed for ``Action/wait(until:)`` fired.
    public mutating func timerFired(now: C.Instant) -> Action {
        switch self.state {
        case .waiting(let attempt, let until):
            guard now >= until else { return .wait(until: until) }
            self.state = .connecting(attempt: attempt)
            return .connect
        case .idle, .connecting, .connected, .stopped:
            return .none
        }
    }

    /// The owner no longer wants to be connected. Idempotent; a give-up's error is kept.
    public mutating func stop() -> Action {
        switch self.state {
        case .idle, .connecting, .connected, .waiting:
            self.state = .stopped(nil)
        case .stopped:
            break
        }
        return .none
    }

    // MARK: - Steps

    private mutating func failed(_ error: XMPPClientError, failures: Int, now: C.Instant) -> Action {
        if Self.isPermanent(error) { return self.giveUp(error) }
        if let maximum = self.configuration.maximumAttempts, failures >= maximum { return self.giveUp(error) }
        return self.scheduleAttempt(after: failures, delayIndex: failures - 1, now: now)
    }

    private mutating func scheduleAttempt(after failures: Int, delayIndex: Int, now: C.Instant) -> Action {
        let until = now.advanced(by: self.delay(index: delayIndex))
        self.state = .waiting(attempt: failures, until: until)
        return .wait(until: until)
    }

    private mutating func giveUp(_ error: XMPPClientError) -> Action {
        self.state = .stopped(error)
        return .giveUp(error)
    }

    /// `min(maximumDelay, initialDelay · multiplier^index)`, jittered.
    func delay(index: Int) -> Duration {
        let initial = Self.seconds(self.configuration.initialDelay)
        let maximum = Self.seconds(self.configuration.maximumDelay)
        let growth = Swift.max(self.configuration.multiplier, 1)
        let exponent = Self.power(growth, Swift.max(index, 0))
        let raw = initial * exponent
        let base: Duration = raw.isFinite && raw < maximum ? .seconds(raw) : self.configuration.maximumDelay
        let spread = Swift.min(Swift.max(self.configuration.jitter, 0), 1)
        guard spread > 0 else { return base }
        let draw = Swift.min(Swift.max(self.random(-spread...spread), -spread), spread)
        return base * (1 + draw)
    }

    /// `base^exponent` by squaring; overflows to infinity, which the caller caps.
    private static func power(_ base: Double, _ exponent: Int) -> Double {
        var result = 1.0
        var factor = base
        var remaining = exponent
        while remaining > 0 {
            if remaining & 1 == 1 { result *= factor }
            factor *= factor
            remaining >>= 1
        }
        return result
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    // MARK: - Permanence

    /// Whether retrying cannot help, so the machine gives up instead of backing off.
    ///
    /// Permanent: the configuration; no STARTTLS where TLS is required (retrying
    /// would only offer a downgrade again); a TLS configuration error or a rejected
    /// certificate (also a handshake failure that carries a certificate verdict);
    /// authentication failures, except SASL `temporary-auth-failure` (RFC 6120
    /// §6.5.12); binding refused with `bad-request`, `forbidden`, `not-allowed` or
    /// `not-authorized`, or not offered at all; and the stream errors that say this
    /// account or client cannot be served as configured (RFC 6120 §4.9.3): `host-gone`,
    /// `host-unknown`, `not-authorized`, `unsupported-encoding`, `unsupported-feature`,
    /// `unsupported-version`.
    ///
    /// Everything else is transient: resolution and connection failures, STARTTLS
    /// refused, TLS I/O or protocol failures, a server closing or timing out,
    /// malformed server XML, and stream errors such as `conflict`, `policy-violation`,
    /// `system-shutdown`, `connection-timeout`, `reset`, `see-other-host` or
    /// `internal-server-error`.
    public static func isPermanent(_ error: XMPPClientError) -> Bool {
        switch error {
        case .configuration, .tlsNotOffered, .registrationFailed:
            return true
        case .tls(let tlsError):
            return Self.isPermanent(tlsError)
        case .authenticationFailed(_, let saslError):
            return Self.isPermanent(saslError)
        case .bindFailed(let condition, _):
            return ["bad-request", "forbidden", "not-allowed", "not-authorized", "not-offered"].contains(condition)
        case .streamError(let condition, _):
            return Self.isPermanent(condition)
        case .resolutionFailed, .connectFailed, .startTLSRefused, .invalidServerXML, .unexpectedElement,
            .closedByServer, .streamClosedByServer, .timedOut:
            return false
        }
    }

    private static func isPermanent(_ error: TLSError) -> Bool {
        switch error.kind {
        case .configuration, .certificateRejected:
            return true
        case .handshakeFailed:
            return error.certificateVerification != nil
        case .ioFailed, .unencryptedDataAfterProceed, .closedByPeer:
            return false
        }
    }

    private static func isPermanent(_ error: SASLError) -> Bool {
        switch error {
        case .failure(condition: .temporaryAuthFailure, _):
            return false
        case .failure, .noAcceptableMechanism, .plainWithoutTLS, .invalidUsername, .invalidPassword,
            .invalidClientNonce, .malformedChallenge, .serverNonceMismatch, .unsupportedMandatoryExtension,
            .iterationCountTooHigh, .serverError, .missingServerSignature, .invalidServerSignature, .invalidBase64,
            .unexpectedEvent, .malformedOutcome, .channelBindingInconsistent, .downgradeDetected, .downgradeProtectionMissing:
            return true
        }
    }

    private static func isPermanent(_ condition: StreamErrorCondition) -> Bool {
        switch condition {
        case .hostGone, .hostUnknown, .notAuthorized, .unsupportedEncoding, .unsupportedFeature, .unsupportedVersion:
            return true
        case .conflict, .policyViolation, .badFormat, .badNamespacePrefix, .connectionTimeout, .improperAddressing, .internalServerError,
            .invalidFrom, .invalidNamespace, .invalidXML, .notWellFormed, .remoteConnectionFailed, .reset,
            .resourceConstraint, .restrictedXML, .seeOtherHost, .systemShutdown, .undefinedCondition,
            .unsupportedStanzaType:
            return false
        }
    }
}
