import Testing
import TestSupport

@testable import Bridge
@testable import BridgeRelay

/// Leases with self-fencing (issue 26) as a pure machine: when an instance may work on a
/// resource, when it renews, and that it stops before the database could give the lease to
/// another, whatever the answers and their delays.
@Suite("LeaseStateMachine")
struct LeaseStateMachineTests {
    typealias Machine = LeaseStateMachine<ManualClock.Instant>
    static let t0 = ManualClock.Instant()

    static func at(_ milliseconds: Int) -> ManualClock.Instant { t0.advanced(by: .milliseconds(milliseconds)) }

    /// ttl 9 s, margin 1.8 s (a fifth), renewed every 3 s.
    static func machine() -> Machine {
        Machine(configuration: .init(ttl: .seconds(9)), now: Self.t0)
    }

    /// A machine that asked at 0 and was granted `epoch` at `grantedAt` ms.
    static func held(epoch: Int64, grantedAt: Int = 10, margin: Duration? = nil) -> Machine {
        var machine = Machine(configuration: .init(ttl: .seconds(9), margin: margin), now: Self.t0)
        _ = machine.timerFired(now: Self.at(0))
        _ = machine.acquired(epoch: epoch, now: Self.at(grantedAt))
        return machine
    }

    @Test("acquired: work starts; renewed every ttl/3, each renewal good for ttl less the margin from when it was asked")
    func acquireAndRenew() {
        var machine = Self.machine()
        #expect(machine.nextDeadline == Self.at(0))
        #expect(machine.timerFired(now: Self.at(0)) == [.acquire])
        #expect(machine.nextDeadline == nil, "one request at a time: its answer or failure comes next")
        #expect(machine.acquired(epoch: 4, now: Self.at(50)) == [.start(epoch: 4)])
        #expect(machine.mayWork(now: Self.at(50)))
        #expect(machine.nextDeadline == Self.at(3_000))
        #expect(machine.timerFired(now: Self.at(2_999)).isEmpty)
        #expect(machine.timerFired(now: Self.at(3_000)) == [.renew(epoch: 4)])
        #expect(machine.renewed(now: Self.at(3_100)).isEmpty)
        #expect(machine.state == .held(epoch: 4, validUntil: Self.at(10_200), renewAt: Self.at(6_000), renewing: nil))
        #expect(machine.mayWork(now: Self.at(10_199)) && !machine.mayWork(now: Self.at(10_200)))
    }

    @Test("renewals that fail (the database unreachable) end the work before the lease could expire, and it is asked for again")
    func unreachableDatabaseFences() {
        var machine = Self.held(epoch: 1)
        #expect(machine.timerFired(now: Self.at(3_000)) == [.renew(epoch: 1)])
        #expect(machine.requestFailed(now: Self.at(4_000)).isEmpty)
        #expect(machine.mayWork(now: Self.at(4_000)), "still within the grant")
        #expect(machine.timerFired(now: Self.at(7_000)) == [.renew(epoch: 1)])
        #expect(machine.requestFailed(now: Self.at(7_000)).isEmpty)
        #expect(machine.nextDeadline == Self.at(7_200), "the grant's end, before the next renewal")
        #expect(machine.timerFired(now: Self.at(7_200)) == [.fence])
        #expect(!machine.mayWork(now: Self.at(7_200)))
        #expect(machine.timerFired(now: Self.at(7_200)) == [.acquire])
    }

    @Test("a process paused past its grant fences first when it wakes, and never renews the old grant")
    func pausedProcessFencesFirst() {
        var machine = Self.held(epoch: 2)
        // SIGSTOP at 1 s, SIGCONT at 30 s.
        #expect(!machine.mayWork(now: Self.at(30_000)))
        #expect(machine.timerFired(now: Self.at(30_000)) == [.fence])
        #expect(machine.timerFired(now: Self.at(30_000)) == [.acquire])
        #expect(machine.taken(now: Self.at(30_010)).isEmpty, "another instance holds it now")
        #expect(machine.nextDeadline == Self.at(30_910), "asked for again a tenth of the ttl later")
    }

    @Test("a lease held elsewhere is asked for again every tenth of the ttl, a second at most; renewals every third")
    func retryPeriod() {
        #expect(Machine.Configuration(ttl: .seconds(3)).retryEvery == .milliseconds(300))
        #expect(Machine.Configuration(ttl: .seconds(60)).retryEvery == .seconds(1))
        #expect(Machine.Configuration(ttl: .seconds(60)).renewEvery == .seconds(20))
    }

    @Test("a refused renewal (another owner or epoch) fences at once; a late answer to it changes nothing")
    func refusedRenewalFences() {
        var machine = Self.held(epoch: 3)
        _ = machine.timerFired(now: Self.at(3_000))
        #expect(machine.renewalRefused(now: Self.at(3_010)) == [.fence])
        #expect(machine.renewed(now: Self.at(3_020)).isEmpty)
        #expect(!machine.mayWork(now: Self.at(3_020)))
    }

    @Test("a grant answered after it could be used is not used; release stops the work, then gives the lease back")
    func lateGrantAndRelease() {
        var machine = Self.machine()
        _ = machine.timerFired(now: Self.at(0))
        #expect(machine.acquired(epoch: 5, now: Self.at(7_200)).isEmpty)
        #expect(!machine.mayWork(now: Self.at(7_200)))
        #expect(machine.timerFired(now: Self.at(7_200)) == [.acquire])
        #expect(machine.acquired(epoch: 6, now: Self.at(7_300)) == [.start(epoch: 6)])
        #expect(machine.release() == [.fence, .release(epoch: 6)])
        #expect(machine.nextDeadline == nil && !machine.mayWork(now: Self.at(7_300)))
        #expect(machine.timerFired(now: Self.at(20_000)).isEmpty)
    }

    /// Any order of timer calls, answers, failures and delays, with the database's clock
    /// running up to 10 % fast (its ttl then ends sooner by ours) and the database refusing
    /// a renewal it handles after its expiry: the instance works only while the lease it
    /// holds cannot have ended. Checked before and after every event.
    @Test("never works past the database's expiry, over 2,000 random histories with a fast database clock")
    func neverWorksPastTheDatabasesExpiry() {
        var random = SplitMix64(state: 26)
        for _ in 0..<2_000 {
            var machine = Self.machine()
            let databaseTTL = 9_000 * (1_000 - Int(random.next() % 100)) / 1_000  // 9 s by a clock up to 10 % fast
            var now = 0
            var pending: (at: Int, acquire: Bool)?
            var expiry = Int.min  // when the database ends our lease, in our milliseconds
            func check() {
                #expect(!machine.mayWork(now: Self.at(now)) || now < expiry, "worked at \(now) ms, the lease ended at \(expiry) ms")
            }
            for _ in 0..<60 {
                now += Int(random.next() % 4_000)
                check()
                for action in machine.timerFired(now: Self.at(now)) {
                    if action == .acquire { pending = (now, true) }
                    if case .renew = action { pending = (now, false) }
                }
                check()
                guard let request = pending, random.next() % 3 != 0 else { continue }
                let handled = request.at + Int(random.next() % 2_500)  // when the database handles it
                now = handled + Int(random.next() % 2_500)  // when the answer arrives
                check()
                switch random.next() % 4 {
                case 0:
                    _ = machine.requestFailed(now: Self.at(now))
                case 1 where request.acquire:
                    _ = machine.taken(now: Self.at(now))
                default:
                    if request.acquire {
                        expiry = handled + databaseTTL
                        _ = machine.acquired(epoch: 1, now: Self.at(now))
                    } else if handled < expiry {
                        expiry = handled + databaseTTL
                        _ = machine.renewed(now: Self.at(now))
                    } else {
                        _ = machine.renewalRefused(now: Self.at(now))
                    }
                }
                pending = nil
                check()
            }
        }
    }

    @Test("with no margin, a database clock running fast is caught: the margin is what keeps the instance safe")
    func noMarginIsUnsafe() {
        let machine = Self.held(epoch: 1, grantedAt: 0, margin: .zero)
        // The database's 9 s by a clock 10 % fast end at 8.1 s by ours.
        #expect(machine.mayWork(now: Self.at(8_100)), "unsafe without a margin")
        let safe = Self.held(epoch: 1, grantedAt: 0)
        #expect(!safe.mayWork(now: Self.at(8_100)))
    }

    @Test("a fair share is the resources over the live instances, rounded up, plus one; never more than there are")
    func fairShare() {
        #expect(FairShare.limit(resources: 300, liveInstances: 3) == 101, "within 40 %")
        #expect(FairShare.limit(resources: 3, liveInstances: 2) == 3, "few resources: one instance may keep them all")
        #expect(FairShare.limit(resources: 1_000, liveInstances: 2) == 501)
        #expect(FairShare.limit(resources: 5, liveInstances: 1) == 5)
        #expect(FairShare.limit(resources: 5, liveInstances: 0) == 5, "no heartbeat yet: this one alone")
        #expect(FairShare.limit(resources: 0, liveInstances: 3) == 0)
    }
}
