import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

/// Presence relay and roster mirrors of the `xmpp-bridge run` daemon against a real Prosody
/// (issue 5, "Real Prosody").
///
/// Each test starts its own Prosody (domain example.test) and the built binary with a
/// generated `bridge.toml`. The bridge's accounts are `work` and `home`; alice is work's
/// contact and bob home's; carol and dave are contacts put on rosters. The user's "other
/// clients" on an account are `TestSession`s of the same account with resource `phone`.
/// Where the issue asks for 2 s, the latency is measured from the action and printed.
@Suite("presence relay and roster mirrors against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct PresenceMirrorIntegrationTests {
    static let link = """
        [channels.link]
        members = [
          { account = "work", jid = "alice@example.test", direction = "inout" },
          { account = "home", jid = "bob@example.test", direction = "inout" },
        ]
        """

    static let oneWay = """
        [[roster_mirror]]
        from = "work"
        to = "home"
        """

    static let twoWay = """
        [[roster_mirror]]
        from = "work"
        to = "home"
        two_way = true
        """

    /// How long a relayed presence or a mirrored roster change may take before the test
    /// calls it lost. The goal (2 s) is a performance target: the latencies are
    /// printed (`[presence-mirror] …`), not asserted against it, so a loaded machine does
    /// not fail the suite (they are 10–300 ms when it is not).
    static let bound = Duration.seconds(10)

    @Test("a contact of work goes away with a status, then offline: bob sees home follow (latencies reported; goal 2 s)")
    func presenceRelay() async throws {
        let scenario = try await DaemonScenario.start(
            accounts: ["work", "home"],
            others: ["alice", "bob"],
            bridge: "presence_interval_ms = 200", rest: Self.link,
            prepare: { server in
                try await MirrorSupport.subscribeBothWays("work", "alice", on: server)
                try await MirrorSupport.subscribeBothWays("bob", "home", on: server)
            }
        )
        defer { scenario.shutdown() }
        let (server, bridge) = (scenario.server, scenario.bridge)
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        let home = try MirrorSupport.jid("home", on: server)

        // alice online → home available, as bob sees it. Both accounts start unavailable
        // (neither contact is known yet), and must still hear their contacts.
        let available = await bob.log.waitFor(timeout: .seconds(10)) {
            guard let (presence, _) = MirrorSupport.presence($0, from: home) else { return false }
            return presence.type == .available && presence.show == nil
        }
        #expect(available != nil, "bob never saw home available; stderr:\n\(bridge.run.errors)")

        var mark = await bob.log.events.count
        var start = ContinuousClock.now
        try await alice.session.setPresence(show: .away, status: "in a meeting")
        let away = await bob.log.waitFor(after: mark, timeout: .seconds(10)) {
            guard let (presence, _) = MirrorSupport.presence($0, from: home) else { return false }
            return presence.type == .available && presence.show == .away
        }
        let awayLatency = ContinuousClock.now - start
        let (awayPresence, awayBest) = try #require(
            away.flatMap { MirrorSupport.presence($0, from: home) }, "bob never saw home away; stderr:\n\(bridge.run.errors)"
        )
        #expect(awayPresence.status == "in a meeting")
        #expect(awayBest?.show == .away)
        #expect(awayLatency < Self.bound, "home away after \(awayLatency)")
        MirrorSupport.report("presence away relayed", awayLatency)

        mark = await bob.log.events.count
        start = ContinuousClock.now
        async let aliceStopped: Void = alice.stop()
        let gone = await bob.log.waitFor(after: mark, timeout: .seconds(10)) {
            guard let (presence, best) = MirrorSupport.presence($0, from: home) else { return false }
            return presence.type == .unavailable || best == nil
        }
        let goneLatency = ContinuousClock.now - start
        await aliceStopped
        #expect(gone != nil, "bob never saw home unavailable; stderr:\n\(bridge.run.errors)")
        #expect(goneLatency < Self.bound, "home unavailable after \(goneLatency)")
        MirrorSupport.report("presence unavailable relayed", goneLatency)

        // Showing unavailable must not make work deaf to alice: she comes back, home follows.
        mark = await bob.log.events.count
        let again = try await TestSession.start("alice", on: server)
        // Measured from alice's login on: the bound is for the relay, not for her login.
        start = ContinuousClock.now
        let back = await bob.log.waitFor(after: mark, timeout: .seconds(10)) {
            guard let (presence, _) = MirrorSupport.presence($0, from: home) else { return false }
            return presence.type == .available && presence.show == nil
        }
        let backLatency = ContinuousClock.now - start
        #expect(back != nil, "bob never saw home available again; stderr:\n\(bridge.run.errors)")
        #expect(backLatency < Self.bound, "home available again after \(backLatency)")
        MirrorSupport.report("presence available again (after alice is back online)", backLatency)
        await again.stop()

        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await bob.stop()
    }

    @Test("one-way roster mirror: a contact added on work appears on home, is renamed and removed (latencies reported; goal 2 s)")
    func oneWayMirror() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["work", "home"], others: ["carol"], rest: Self.oneWay)
        defer { scenario.shutdown() }
        let (server, bridge) = (scenario.server, scenario.bridge)
        let work = try await TestSession.start("work", on: server, resource: "phone")
        let home = try await TestSession.start("home", on: server, resource: "phone")
        let carol = try MirrorSupport.jid("carol", on: server)

        var start = ContinuousClock.now
        try await work.session.setContact(carol, name: "Carol")
        let added = await MirrorSupport.poll(since: start) { await home.session.roster.items[carol]?.name == "Carol" }
        #expect(added != nil && added! < Self.bound, "carol on home after \(String(describing: added)); stderr:\n\(bridge.run.errors)")
        MirrorSupport.report("roster add mirrored", added)
        #expect(await home.session.roster.items[carol]?.groups == [])

        start = ContinuousClock.now
        try await work.session.setContact(carol, name: "Carol C.")
        let renamed = await MirrorSupport.poll(since: start) { await home.session.roster.items[carol]?.name == "Carol C." }
        #expect(renamed != nil && renamed! < Self.bound, "rename on home after \(String(describing: renamed)); stderr:\n\(bridge.run.errors)")
        MirrorSupport.report("roster rename mirrored", renamed)

        start = ContinuousClock.now
        try await work.session.removeContact(carol)
        let removed = await MirrorSupport.poll(since: start) { await home.session.roster.items[carol] == nil }
        #expect(removed != nil && removed! < Self.bound, "removal on home after \(String(describing: removed)); stderr:\n\(bridge.run.errors)")
        MirrorSupport.report("roster removal mirrored", removed)

        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await work.stop()
        await home.stop()
    }

    @Test("xmpp-bridge status shows both accounts connected with nothing queued; roster --json marks the mirrored copy")
    func statusAndRosterCommands() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["work", "home"], others: ["carol"], rest: Self.oneWay, sockets: ["bridge.control"])
        defer { scenario.shutdown() }
        let (server, config, bridge) = (scenario.server, scenario.config, scenario.bridge)

        let status = try MirrorSupport.command(["status", "--config", config], in: server.directory)
        #expect(status.status == 0, "stderr: \(status.errors)")
        let lines = status.output.split(separator: "\n").map(String.init)
        #expect(lines == ["home [xmpp]  connected  queued 0  dead 0", "work [xmpp]  connected  queued 0  dead 0"], "status printed:\n\(status.output)")

        let work = try await TestSession.start("work", on: server, resource: "phone")
        let carol = try MirrorSupport.jid("carol", on: server)
        try await work.session.setContact(carol, name: "Carol")
        // The snapshot is stored once home confirmed the set; poll until the daemon reports it.
        var entry: MirrorSupport.RosterEntry?
        let mirrored = await MirrorSupport.poll {
            entry = try? MirrorSupport.roster("home", config: config, in: server.directory).first { $0.jid == carol.description }
            return entry?.mirrored == true
        }
        #expect(mirrored != nil, "roster home --json: \(String(describing: entry)); stderr:\n\(bridge.run.errors)")
        #expect(entry?.name == "Carol")
        #expect(entry?.subscription == "none")
        #expect(entry?.availability == "unavailable")
        // work's own item is the user's, not the mirror's.
        let workEntry = try MirrorSupport.roster("work", config: config, in: server.directory).first { $0.jid == carol.description }
        #expect(workEntry?.mirrored == false)

        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await work.stop()
    }

    @Test("changes while the bridge is down: an item removed on work goes from home, one added by hand on home stays")
    func offlineReconciliation() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["work", "home"], others: ["carol", "dave", "erin"], rest: Self.oneWay)
        defer { scenario.shutdown() }
        let (server, config, first) = (scenario.server, scenario.config, scenario.bridge)
        let work = try await TestSession.start("work", on: server, resource: "phone")
        let home = try await TestSession.start("home", on: server, resource: "phone")
        let carol = try MirrorSupport.jid("carol", on: server)
        let dave = try MirrorSupport.jid("dave", on: server)

        try await work.session.setContact(carol, name: "Carol")
        let stored = await MirrorSupport.poll {
            (try? MirrorSupport.roster("home", config: config, in: server.directory).first { $0.jid == carol.description }?.mirrored) == true
        }
        #expect(stored != nil, "carol never mirrored to home; stderr:\n\(first.run.errors)")
        #expect(first.stop() == 0, "stderr: \(first.run.errors)")

        try await work.session.removeContact(carol)
        try await home.session.setContact(dave, name: "Dave")
        #expect(await MirrorSupport.poll { await work.session.roster.items[carol] == nil } != nil)
        #expect(await MirrorSupport.poll { await home.session.roster.items[dave] != nil } != nil)
        #expect(await home.session.roster.items[carol] != nil, "carol left home while the bridge was down")

        let start = ContinuousClock.now
        let second = try BridgeDaemon.start(config: config, in: server.directory)
        defer { second.terminate() }
        try await second.waitOnline(["work", "home"])
        let reconciled = await MirrorSupport.poll(since: start) { await home.session.roster.items[carol] == nil }
        #expect(reconciled != nil, "carol still on home; stderr:\n\(second.run.errors)")
        MirrorSupport.report("offline removal reconciled after start", reconciled)

        // A marker: a contact added on work after the reconciliation. Once its copy is on
        // home, the reconciliation that removed carol is long done: had it taken dave too,
        // that would have come first.
        let erin = try MirrorSupport.jid("erin", on: server)
        try await work.session.setContact(erin, name: "Erin")
        #expect(await MirrorSupport.poll { await home.session.roster.items[erin] != nil } != nil, "the marker never reached home")
        #expect(await home.session.roster.items[dave]?.name == "Dave", "the hand-added dave left home")
        #expect(await home.session.roster.items[carol] == nil)
        #expect(await work.session.roster.items[dave] == nil, "a one-way mirror wrote to its source")
        let entry = try MirrorSupport.roster("home", config: config, in: server.directory).first { $0.jid == dave.description }
        #expect(entry?.mirrored == false)

        #expect(second.stop() == 0, "stderr: \(second.run.errors)")
        await work.stop()
        await home.stop()
    }

    @Test("two-way mirror: each side's new contact reaches the other; the converged rosters are a fixed point (markers pass, nothing else is set)")
    func twoWayConvergence() async throws {
        let scenario = try await DaemonScenario.start(accounts: ["work", "home"], others: ["carol", "dave", "erin", "frank"], rest: Self.twoWay)
        defer { scenario.shutdown() }
        let (server, config, bridge) = (scenario.server, scenario.config, scenario.bridge)
        let work = try await TestSession.start("work", on: server, resource: "phone")
        let home = try await TestSession.start("home", on: server, resource: "phone")
        let carol = try MirrorSupport.jid("carol", on: server)
        let dave = try MirrorSupport.jid("dave", on: server)

        let start = ContinuousClock.now
        try await work.session.setContact(carol, name: "Carol")
        try await home.session.setContact(dave, name: "Dave")
        let converged = await MirrorSupport.poll(since: start) {
            let onWork = await work.session.roster.items
            let onHome = await home.session.roster.items
            return onWork[carol]?.name == "Carol" && onWork[dave]?.name == "Dave"
                && onHome[carol]?.name == "Carol" && onHome[dave]?.name == "Dave"
        }
        #expect(converged != nil, "not converged; stderr:\n\(bridge.run.errors)")
        MirrorSupport.report("two-way converged", converged)
        // Each copy is logged once its set is confirmed (after the push the test saw).
        let logged = await MirrorSupport.poll { MirrorSupport.mirrorChanges(in: bridge) >= 2 }
        #expect(logged != nil, "stderr:\n\(bridge.run.errors)")

        // A session's roster copy changes before its event stream reaches the log, so wait for
        // the two pushes each side must see (its own set and the mirror's copy) before the baseline.
        let settled = await MirrorSupport.poll {
            let onWork = await MirrorSupport.rosterPushes(work.log)
            let onHome = await MirrorSupport.rosterPushes(home.log)
            return onWork >= 2 && onHome >= 2
        }
        #expect(settled != nil, "roster pushes never reached the test's logs")
        let pushesBefore = (work: await MirrorSupport.rosterPushes(work.log), home: await MirrorSupport.rosterPushes(home.log))
        let changesBefore = MirrorSupport.mirrorChanges(in: bridge)
        // Markers: one new contact on each side. Each makes the bridge reconcile both
        // rosters again; once both copies have arrived (and are logged), any set a
        // reconciliation of the converged rosters would make has happened, so the only
        // pushes since the baseline are the markers' (one own set and one copy per side).
        let erin = try MirrorSupport.jid("erin", on: server)
        let frank = try MirrorSupport.jid("frank", on: server)
        try await work.session.setContact(erin, name: "Erin")
        try await home.session.setContact(frank, name: "Frank")
        let marked = await MirrorSupport.poll {
            let onHome = await home.session.roster.items[erin] != nil
            let onWork = await work.session.roster.items[frank] != nil
            let pushesOnWork = await MirrorSupport.rosterPushes(work.log)
            let pushesOnHome = await MirrorSupport.rosterPushes(home.log)
            return onHome && onWork && pushesOnWork >= pushesBefore.work + 2 && pushesOnHome >= pushesBefore.home + 2
                && MirrorSupport.mirrorChanges(in: bridge) >= changesBefore + 2
        }
        #expect(marked != nil, "the markers were not mirrored; stderr:\n\(bridge.run.errors)")
        let pushesAfter = (work: await MirrorSupport.rosterPushes(work.log), home: await MirrorSupport.rosterPushes(home.log))
        let changesAfter = MirrorSupport.mirrorChanges(in: bridge)
        #expect(pushesAfter.work - pushesBefore.work == 2, "roster pushes on work besides the markers: \(pushesAfter.work - pushesBefore.work - 2)")
        #expect(pushesAfter.home - pushesBefore.home == 2, "roster pushes on home besides the markers: \(pushesAfter.home - pushesBefore.home - 2)")
        #expect(changesAfter == 4, "one set per copy expected (2 contacts, 2 markers); stderr:\n\(bridge.run.errors)")
        print("[presence-mirror] two-way: pushes before the markers work=\(pushesBefore.work) home=\(pushesBefore.home), after work=\(pushesAfter.work) home=\(pushesAfter.home); mirror changes logged \(changesAfter)")

        // Each side's own item stays the user's; each copy is the mirror's.
        let onWork = try MirrorSupport.roster("work", config: config, in: server.directory)
        let onHome = try MirrorSupport.roster("home", config: config, in: server.directory)
        #expect(onWork.first { $0.jid == carol.description }?.mirrored == false)
        #expect(onWork.first { $0.jid == dave.description }?.mirrored == true)
        #expect(onHome.first { $0.jid == carol.description }?.mirrored == true)
        #expect(onHome.first { $0.jid == dave.description }?.mirrored == false)

        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors)")
        await work.stop()
        await home.stop()
    }
}

/// Helpers of ``PresenceMirrorIntegrationTests``.
enum MirrorSupport {
    static func jid(_ user: String, on server: any TestXMPPServer) throws -> JID {
        try JID(localpart: user, domainpart: server.domain)
    }

    /// Makes `first` and `second` subscribed to each other (`both` on either roster), with
    /// sessions that approve every request, then ends those sessions.
    static func subscribeBothWays(_ first: String, _ second: String, on server: any TestXMPPServer) async throws {
        let one = try await TestSession.start(first, on: server, resource: "setup", policy: .acceptAll)
        let two = try await TestSession.start(second, on: server, resource: "setup", policy: .acceptAll)
        // One way, then the other: once, on a clean clone, ejabberd's rosters were still short
        // of `both` 15 s after two crossing requests (the crossing is the suspected cause).
        try await one.session.subscribe(to: two.jid.bare)
        _ = await Self.poll { await two.session.roster.items[one.jid.bare]?.subscription == .from }
        try await two.session.subscribe(to: one.jid.bare)
        let both = await Self.poll {
            let forward = await one.session.roster.items[two.jid.bare]?.subscription
            let backward = await two.session.roster.items[one.jid.bare]?.subscription
            return forward == .both && backward == .both
        }
        await one.stop()
        await two.stop()
        guard both != nil else { throw TestFailure("\(first) and \(second) did not subscribe to each other") }
    }

    /// Polls `condition` every 10 ms; the time from `start` until it held, nil after `timeout`.
    static func poll(
        timeout: Duration = .seconds(15), since start: ContinuousClock.Instant = .now, _ condition: () async -> Bool
    ) async -> Duration? {
        let remaining = ContinuousClock.now.duration(to: start + timeout)
        guard await eventually(timeout: max(remaining, .zero), every: .milliseconds(10), condition) else { return nil }
        return ContinuousClock.now - start
    }

    /// The presence and the sender's aggregate of a presence event from `jid` (any resource).
    static func presence(_ event: XMPPSessionEvent, from jid: JID) -> (Presence, Presence?)? {
        guard case .presence(let presence, let best) = event, presence.from?.bare == jid.bare else { return nil }
        return (presence, best)
    }

    /// Roster pushes a session received so far (each one roster set by someone).
    static func rosterPushes(_ log: EventLog) async -> Int {
        await log.events.filter { if case .rosterChanged = $0 { true } else { false } }.count
    }

    /// Roster sets and removals the daemon logged so far.
    static func mirrorChanges(in bridge: BridgeDaemon) -> Int {
        bridge.logLines.filter { $0.contains("roster mirror set") || $0.contains("roster mirror removed") }.count
    }

    static func report(_ what: String, _ latency: Duration?) {
        let text = latency.map { String(format: "%.0f ms", Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15) } ?? "never"
        print("[presence-mirror] \(what): \(text)")
    }

    /// Runs `xmpp-bridge ARGUMENTS` to its end.
    static func command(_ arguments: [String], in directory: String) throws -> (status: Int32?, output: String, errors: String) {
        let run = try CommandLineTests.start(arguments, in: directory)
        let status = run.finish(timeout: 15)
        return (status, run.output, run.errors)
    }

    /// One line of `xmpp-bridge roster ACCOUNT --json`.
    struct RosterEntry: Decodable, Sendable {
        var jid: String
        var name: String?
        var groups: [String]
        var subscription: String
        var pending: Bool
        var availability: String
        var status: String?
        var mirrored: Bool
    }

    /// `xmpp-bridge roster ACCOUNT --json --config CONFIG`, decoded.
    static func roster(_ account: String, config: String, in directory: String) throws -> [RosterEntry] {
        let run = try Self.command(["roster", account, "--json", "--config", config], in: directory)
        guard run.status == 0 else { throw TestFailure("roster \(account) exited \(String(describing: run.status)): \(run.errors)") }
        return try JSONDecoder().decode([RosterEntry].self, from: Data(run.output.utf8))
    }
}
