import Testing

@testable import XMPP

/// The steps after each (re)connect, without a socket.
@Suite("SessionRestoreStateMachine")
struct SessionRestoreStateMachineTests {
    typealias Machine = SessionRestoreStateMachine

    static let everything = Machine.Configuration(streamManagement: true, carbons: true, roster: true, presence: true)

    /// Runs the machine to the end, answering each step with `answer`; the steps in order.
    static func steps(
        _ machine: inout Machine, resumed: Bool, offersSM: Bool = true, answer: (Machine.Step) -> Machine.Outcome = { _ in .done }
    ) -> [Machine.Step] {
        var seen: [Machine.Step] = []
        var action = machine.connected(resumed: resumed, offersStreamManagement: offersSM)
        while case .run(let step) = action {
            seen.append(step)
            #expect(seen.count < 20, "the sequence must end")
            if seen.count >= 20 { break }
            action = machine.stepFinished(answer(step))
        }
        return seen
    }

    @Test func aNewSessionRestoresEverythingInOrder() {
        var machine = Machine(configuration: Self.everything)
        let steps = Self.steps(&machine, resumed: false) { $0 == .discoverCarbons ? .carbonsOffered : .done }
        #expect(steps == [.enableStreamManagement, .fetchRoster, .announcePresence, .reportOnline, .discoverCarbons, .enableCarbons, .catchUp])
        #expect(machine.state == .finished(completed: true))
    }

    @Test("what Bind 2 enabled in the login (stream management, carbons) is not asked for again")
    func bind2EnabledSteps() {
        var machine = Machine(configuration: Self.everything)
        var steps: [Machine.Step] = []
        var action = machine.connected(resumed: false, offersStreamManagement: true, streamManagementEnabled: true, carbonsEnabled: true)
        while case .run(let step) = action {
            steps.append(step)
            action = machine.stepFinished(.done)
        }
        #expect(steps == [.fetchRoster, .announcePresence, .reportOnline, .catchUp])
    }

    @Test func carbonsAreEnabledOnlyWhenTheServerOffersThem() {
        var machine = Machine(configuration: Self.everything)
        let steps = Self.steps(&machine, resumed: false)
        #expect(!steps.contains(.enableCarbons))
        #expect(steps.contains(.discoverCarbons))
    }

    @Test func aResumedStreamReportsOnlineFirstAndOnlyFetchesTheRosterAgain() {
        var machine = Machine(configuration: Self.everything)
        let steps = Self.steps(&machine, resumed: true) { $0 == .discoverCarbons ? .carbonsOffered : .done }
        #expect(steps == [.reportOnline, .fetchRoster, .catchUp])
    }

    @Test func inDoubtMessagesAreSettledAfterEnablingStreamManagementAndBeforeOnline() {
        var machine = Machine(configuration: Self.everything)
        var seen: [Machine.Step] = []
        var action = machine.connected(resumed: false, offersStreamManagement: true, inDoubt: true)
        while case .run(let step) = action {
            seen.append(step)
            action = machine.stepFinished(.done)
        }
        #expect(seen == [.enableStreamManagement, .fetchRoster, .checkInDoubt, .announcePresence, .reportOnline, .discoverCarbons, .catchUp])
        // A session lost while checking, then resumed: the check comes first there too.
        var resumed = Machine(configuration: Self.everything)
        #expect(resumed.connected(resumed: true, offersStreamManagement: true, inDoubt: true) == .run(.checkInDoubt))
        #expect(resumed.stepFinished(.done) == .run(.reportOnline))
    }

    @Test func streamManagementIsEnabledOnlyWhenOfferedAndWanted() {
        var offeredNotWanted = Machine(configuration: .init(streamManagement: false, carbons: false, roster: false, presence: false))
        #expect(Self.steps(&offeredNotWanted, resumed: false) == [.reportOnline, .catchUp])
        var wantedNotOffered = Machine(configuration: .init(streamManagement: true, carbons: false, roster: false, presence: false))
        #expect(Self.steps(&wantedNotOffered, resumed: false, offersSM: false) == [.reportOnline, .catchUp])
    }

    @Test func aSessionWithoutPresenceAnnouncesNone() {
        var machine = Machine(configuration: .init(streamManagement: true, carbons: true, roster: true, presence: false))
        #expect(!Self.steps(&machine, resumed: false).contains(.announcePresence))
    }

    @Test func failedStepsDoNotStopTheRest() {
        var machine = Machine(configuration: Self.everything)
        let steps = Self.steps(&machine, resumed: false) { _ in .failed }
        #expect(steps == [.enableStreamManagement, .fetchRoster, .announcePresence, .reportOnline, .discoverCarbons, .catchUp])
        #expect(machine.state == .finished(completed: true))
    }

    @Test func aLostConnectionEndsTheSequenceBeforeOnline() {
        var machine = Machine(configuration: Self.everything)
        #expect(machine.connected(resumed: false, offersStreamManagement: true) == .run(.enableStreamManagement))
        #expect(machine.stepFinished(.done) == .run(.fetchRoster))
        #expect(machine.connectionLost() == .finished)
        #expect(machine.state == .finished(completed: false))
        // A late answer for the step that was under way starts nothing.
        #expect(machine.stepFinished(.done) == .finished)
        #expect(machine.state == .finished(completed: false))
    }

    @Test func everyReconnectStartsAfresh() {
        var machine = Machine(configuration: Self.everything)
        _ = Self.steps(&machine, resumed: false)
        #expect(machine.connected(resumed: true, offersStreamManagement: true) == .run(.reportOnline))
        #expect(machine.connectionLost() == .finished)
        #expect(machine.connected(resumed: false, offersStreamManagement: true) == .run(.enableStreamManagement))
    }
}
