import Testing
import TestSupport

@testable import XMPP

/// XEP-0199 liveness as a pure machine (issue 8: the session's jobs as machines).
@Suite("KeepaliveStateMachine")
struct KeepaliveStateMachineTests {
    typealias Machine = KeepaliveStateMachine<ManualClock.Instant>
    static let t0 = ManualClock.Instant()

    static func at(_ seconds: Int) -> ManualClock.Instant { t0.advanced(by: .seconds(seconds)) }

    static func machine() -> Machine {
        Machine(configuration: .init(interval: .seconds(60), timeout: .seconds(20)), now: Self.t0)
    }

    @Test("quiet for a full interval: ping; an answer makes it quiet again")
    func pingAfterSilence() {
        var machine = Self.machine()
        #expect(machine.nextDeadline == Self.at(60))
        #expect(machine.timerFired(now: Self.at(60)) == .sendPing)
        #expect(machine.state == .pinging(sentAt: Self.at(60)))
        #expect(machine.nextDeadline == Self.at(80))
        machine.trafficReceived(now: Self.at(61))
        #expect(machine.nextDeadline == Self.at(121))
        #expect(machine.timerFired(now: Self.at(80)) == .wait)
    }

    @Test("traffic before the interval ends pushes the ping back")
    func trafficDelaysPing() {
        var machine = Self.machine()
        machine.trafficReceived(now: Self.at(50))
        #expect(machine.timerFired(now: Self.at(60)) == .wait)
        #expect(machine.nextDeadline == Self.at(110))
        #expect(machine.timerFired(now: Self.at(110)) == .sendPing)
    }

    @Test("no answer within the timeout: dead, and nothing after that")
    func deadWithoutAnswer() {
        var machine = Self.machine()
        #expect(machine.timerFired(now: Self.at(60)) == .sendPing)
        #expect(machine.timerFired(now: Self.at(79)) == .wait)
        #expect(machine.timerFired(now: Self.at(80)) == .connectionDead)
        #expect(machine.state == .dead)
        #expect(machine.nextDeadline == nil)
        machine.trafficReceived(now: Self.at(81))
        #expect(machine.state == .dead)
        #expect(machine.timerFired(now: Self.at(200)) == .wait)
    }
}
