import Foundation
import TestSupport
import Testing

@testable import XMPP

/// Backoff, jitter and give-up decisions of the reconnect policy, with instants of a
/// manual clock so every wait is exact.
@Suite("ReconnectStateMachine")
struct ReconnectStateMachineTests {
    typealias Machine = ReconnectStateMachine<ManualClock>
    typealias Instant = ManualClock.Instant

    static let t0 = Instant()
    static let transient = XMPPClientError.connectFailed(attempts: ["example.com:5222: connection refused"])
    static let authFailed = XMPPClientError.authenticationFailed(
        account: "juliet@example.com", .failure(condition: .notAuthorized, text: nil)
    )
    static let certificateRejected = XMPPClientError.tls(TLSError(.certificateRejected, certificateVerification: "unable to get local issuer"))

    static func machine(
        jitter: Double = 0,
        maximumAttempts: Int? = nil,
        random: @escaping @Sendable (ClosedRange<Double>) -> Double = { _ in 0 }
    ) -> Machine {
        Machine(configuration: .init(jitter: jitter, maximumAttempts: maximumAttempts), random: random)
    }

    static func at(_ duration: Duration) -> Instant {
        t0.advanced(by: duration)
    }

    /// Fails every attempt with `error` and returns the wait before each next attempt.
    static func failRepeatedly(_ machine: inout Machine, times: Int, error: XMPPClientError = transient, from start: Instant = t0)
        -> [Duration]
    {
        var now = start
        var waits: [Duration] = []
        for _ in 0..<times {
            guard case .wait(let until) = machine.connectFailed(error, now: now) else {
                Issue.record("expected a wait in \(machine.state)")
                return waits
            }
            waits.append(now.duration(to: until))
            now = until
            #expect(machine.timerFired(now: now) == .connect)
        }
        return waits
    }

    // MARK: - Schedule

    @Test func backoffScheduleWithoutJitter() {
        var machine = Self.machine()
        #expect(machine.state == .idle)
        #expect(machine.start() == .connect)
        #expect(machine.state == .connecting(attempt: 0))
        let waits = Self.failRepeatedly(&machine, times: 9)
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(machine.state == .connecting(attempt: 9))
    }

    @Test func waitingStateRecordsAttemptAndDeadline() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(machine.connectFailed(Self.transient, now: Self.at(.seconds(5))) == .wait(until: Self.at(.seconds(6))))
        #expect(machine.state == .waiting(attempt: 1, until: Self.at(.seconds(6))))
        #expect(machine.timerFired(now: Self.at(.seconds(6))) == .connect)
        #expect(machine.state == .connecting(attempt: 1))
    }

    @Test func jitterStaysWithinBounds() {
        var low = Self.machine(jitter: 0.2, random: { $0.lowerBound })
        var high = Self.machine(jitter: 0.2, random: { $0.upperBound })
        _ = low.start()
        _ = high.start()
        let lowWaits = Self.failRepeatedly(&low, times: 8)
        let highWaits = Self.failRepeatedly(&high, times: 8)
        let nominal: [Double] = [1, 2, 4, 8, 16, 32, 60, 60]
        for (index, seconds) in nominal.enumerated() {
            #expect(abs(Self.seconds(lowWaits[index]) - seconds * 0.8) < 1e-9)
            #expect(abs(Self.seconds(highWaits[index]) - seconds * 1.2) < 1e-9)
        }
    }

    @Test func jitterDrawIsRequestedInTheConfiguredRangeAndClamped() {
        let recorder = RangeRecorder()
        var machine = Self.machine(jitter: 0.2, random: { range in
            recorder.record(range)
            return 5  // out of range: must be clamped to +0.2
        })
        _ = machine.start()
        #expect(machine.connectFailed(Self.transient, now: Self.t0) == .wait(until: Self.at(.milliseconds(1200))))
        #expect(recorder.ranges == [-0.2...0.2])
    }

    @Test func successResetsTheSchedule() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(Self.failRepeatedly(&machine, times: 4) == [1, 2, 4, 8].map { Duration.seconds($0) })
        #expect(machine.connectSucceeded() == .none)
        #expect(machine.state == .connected)
        // Loss of the session: first retry after initialDelay, then the schedule from the start.
        #expect(machine.connectionLost(now: Self.t0) == .wait(until: Self.at(.seconds(1))))
        #expect(machine.state == .waiting(attempt: 0, until: Self.at(.seconds(1))))
        #expect(machine.timerFired(now: Self.at(.seconds(1))) == .connect)
        #expect(Self.failRepeatedly(&machine, times: 3, from: Self.at(.seconds(1))) == [1, 2, 4].map { Duration.seconds($0) })
    }

    @Test func lossWithPermanentErrorGivesUp() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectSucceeded()
        let unauthorized = XMPPClientError.streamError(condition: .notAuthorized, text: "account disabled")
        #expect(machine.connectionLost(unauthorized, now: Self.t0) == .giveUp(unauthorized))
        #expect(machine.state == .stopped(unauthorized))
    }

    /// Issue 8: `conflict` (another client took the resource) and `policy-violation` (a
    /// stanza over a limit) back off and retry instead of stopping the account for good.
    @Test(arguments: [StreamErrorCondition.conflict, .policyViolation])
    func conflictAndPolicyViolationRetry(condition: StreamErrorCondition) {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectSucceeded()
        let error = XMPPClientError.streamError(condition: condition, text: nil)
        #expect(!Machine.isPermanent(error))
        #expect(machine.connectionLost(error, now: Self.t0) == .wait(until: Self.at(.seconds(1))))
        #expect(machine.timerFired(now: Self.at(.seconds(1))) == .connect)
        #expect(machine.connectFailed(error, now: Self.at(.seconds(1))) == .wait(until: Self.at(.seconds(2))))
    }

    @Test func lossWithTransientErrorWaits() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectSucceeded()
        let shutdown = XMPPClientError.streamError(condition: .systemShutdown, text: nil)
        #expect(machine.connectionLost(shutdown, now: Self.t0) == .wait(until: Self.at(.seconds(1))))
    }

    @Test func lossDuringAttemptCountsAsFailure() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(machine.connectionLost(now: Self.t0) == .wait(until: Self.at(.seconds(1))))
        #expect(machine.state == .waiting(attempt: 1, until: Self.at(.seconds(1))))
    }

    // MARK: - Giving up

    @Test func authenticationFailureGivesUpWithoutWaiting() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(machine.connectFailed(Self.authFailed, now: Self.t0) == .giveUp(Self.authFailed))
        #expect(machine.state == .stopped(Self.authFailed))
        #expect(machine.timerFired(now: Self.at(.seconds(100))) == .none)
    }

    @Test func rejectedCertificateGivesUpEvenAfterRetries() {
        var machine = Self.machine()
        _ = machine.start()
        _ = Self.failRepeatedly(&machine, times: 3)
        #expect(machine.connectFailed(Self.certificateRejected, now: Self.at(.seconds(7))) == .giveUp(Self.certificateRejected))
        #expect(machine.state == .stopped(Self.certificateRejected))
    }

    @Test func transientErrorsKeepRetrying() {
        let errors: [XMPPClientError] = [
            .resolutionFailed(domain: "example.com", reason: "timeout"),
            Self.transient,
            .closedByServer,
            .timedOut("stream negotiation"),
            .startTLSRefused,
            .invalidServerXML(XMLStreamError(.notWellFormed, "junk")),
            .streamError(condition: .systemShutdown, text: nil),
            .streamError(condition: .connectionTimeout, text: nil),
            .tls(TLSError(.ioFailed)),
            .tls(TLSError(.handshakeFailed)),
            .authenticationFailed(account: "juliet@example.com", .failure(condition: .temporaryAuthFailure, text: nil)),
            .bindFailed(condition: "resource-constraint", text: nil),
        ]
        var machine = Self.machine()
        _ = machine.start()
        var now = Self.t0
        for error in errors {
            guard case .wait(let until) = machine.connectFailed(error, now: now) else {
                Issue.record("gave up on transient \(error)")
                return
            }
            now = until
            #expect(machine.timerFired(now: now) == .connect)
        }
        #expect(machine.state == .connecting(attempt: errors.count))
    }

    @Test(arguments: [
        XMPPClientError.configuration("plaintext to a remote host"),
        .tlsNotOffered,
        .tls(TLSError(.configuration)),
        .tls(TLSError(.certificateRejected)),
        .tls(TLSError(.handshakeFailed, certificateVerification: "certificate has expired")),
        .authenticationFailed(account: "juliet@example.com", .invalidServerSignature),
        .bindFailed(condition: "not-allowed", text: nil),
        .bindFailed(condition: "not-authorized", text: nil),
        .streamError(condition: .notAuthorized, text: nil),
        .streamError(condition: .hostUnknown, text: nil),
        .streamError(condition: .unsupportedVersion, text: nil),
    ])
    func permanentErrors(error: XMPPClientError) {
        #expect(Machine.isPermanent(error))
    }

    @Test func maximumAttemptsIsHonoured() {
        var machine = Self.machine(maximumAttempts: 3)
        _ = machine.start()
        #expect(Self.failRepeatedly(&machine, times: 2) == [1, 2].map { Duration.seconds($0) })
        #expect(machine.connectFailed(Self.transient, now: Self.at(.seconds(3))) == .giveUp(Self.transient))
        #expect(machine.state == .stopped(Self.transient))
    }

    @Test func restartAfterGivingUp() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectFailed(Self.authFailed, now: Self.t0)
        #expect(machine.start() == .connect)
        #expect(machine.state == .connecting(attempt: 0))
    }

    // MARK: - Timer and stop

    @Test func earlyTimerWaitsAgain() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectFailed(Self.transient, now: Self.t0)
        #expect(machine.timerFired(now: Self.at(.milliseconds(999))) == .wait(until: Self.at(.seconds(1))))
        #expect(machine.state == .waiting(attempt: 1, until: Self.at(.seconds(1))))
        #expect(machine.timerFired(now: Self.at(.seconds(2))) == .connect)
    }

    @Test func staleEventsAreIgnored() {
        var machine = Self.machine()
        #expect(machine.timerFired(now: Self.t0) == .none)
        #expect(machine.connectSucceeded() == .none)
        #expect(machine.connectFailed(Self.transient, now: Self.t0) == .none)
        #expect(machine.connectionLost(now: Self.t0) == .none)
        #expect(machine.state == .idle)
        _ = machine.start()
        #expect(machine.start() == .none)
        #expect(machine.timerFired(now: Self.t0) == .none)
        #expect(machine.state == .connecting(attempt: 0))
    }

    @Test func stopIsIdempotent() {
        var machine = Self.machine()
        #expect(machine.stop() == .none)
        #expect(machine.state == .stopped(nil))
        #expect(machine.stop() == .none)
        #expect(machine.state == .stopped(nil))

        var waiting = Self.machine()
        _ = waiting.start()
        _ = waiting.connectFailed(Self.transient, now: Self.t0)
        #expect(waiting.stop() == .none)
        #expect(waiting.state == .stopped(nil))
        #expect(waiting.timerFired(now: Self.at(.seconds(10))) == .none)
        #expect(waiting.connectSucceeded() == .none)
        #expect(waiting.state == .stopped(nil))
    }

    @Test func stopAfterGivingUpKeepsTheError() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectFailed(Self.authFailed, now: Self.t0)
        #expect(machine.stop() == .none)
        #expect(machine.state == .stopped(Self.authFailed))
    }

    // MARK: - Driven by the manual clock

    @Test func drivenBySleepingOnTheManualClock() async throws {
        let clock = ManualClock()
        var machine = Self.machine()
        _ = machine.start()
        guard case .wait(let until) = machine.connectFailed(Self.transient, now: clock.now) else {
            Issue.record("expected a wait")
            return
        }
        let sleeper = Task { try await clock.sleep(until: until, tolerance: nil) }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(500))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(500))
        try await sleeper.value
        #expect(machine.timerFired(now: clock.now) == .connect)
    }

    @Test func cancelledSleepThrows() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: clock.now.advanced(by: .seconds(10)), tolerance: nil) }
        await clock.waitForSleepers()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleeperCount == 0)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}

/// Collects the ranges the machine asks the random source for.
private final class RangeRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [ClosedRange<Double>] = []

    func record(_ range: ClosedRange<Double>) {
        self.lock.withLock { self.stored.append(range) }
    }

    var ranges: [ClosedRange<Double>] {
        self.lock.withLock { self.stored }
    }
}
