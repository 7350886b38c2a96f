import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

extension SeveralInstancesIntegrationTests {
    /// How the owner of both accounts goes away.
    enum OwnerFault: String, CaseIterable, Sendable, CustomStringConvertible {
        case killed = "kill -9"
        case paused = "SIGSTOP past its lease, then SIGCONT"
        var description: String { self.rawValue }
    }

    /// The link alice → work → bridge → home → bob with both accounts run by one instance
    /// (issue 39): the source is an account, so its owner's death leaves the server with
    /// stanzas it handed over and the new owner resumes the source's session too.
    @Test("both accounts of a link on one instance, which dies (or pauses) mid burst of 600: the other takes both over; bob gets every message once", arguments: OwnerFault.allCases)
    func ownerOfBothAccounts(fault: OwnerFault) async throws {
        var options = ProsodyServer.Options()
        options.archive = true
        let server = try await ProsodyServer.started(options, accounts: DaemonScenario.users("alice", "bob", "work", "home"))
        defer { server.shutdown() }
        let database = try await SharedPostgres.freshDatabase()
        // node-a alone first, so it takes both leases; node-b only then.
        let first = try await Self.start(on: server, database: (database.url, database.password), names: ["node-a"])
        defer { first.forEach { $0.terminate() } }
        try await first[0].waitOnline(["work", "home"])
        let second = try await Self.start(on: server, database: (database.url, database.password), names: ["node-b"])
        defer { second.forEach { $0.terminate() } }
        let (owner, other) = (first[0], second[0])
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        #expect(await bob.waitForServerUptime(atLeast: Self.ttl + 3), "the server does not report its uptime (XEP-0012)")
        let sent = (1...600).map { String(format: "both %03d", $0) }
        try await Self.send(sent, from: alice)
        _ = await Received.bodies(bob.log, count: 150, timeout: .seconds(60))
        let pid = owner.run.process.pid
        switch fault {
        case .killed:
            kill(pid, SIGKILL)
            _ = owner.run.finish(timeout: 10)
        case .paused:
            kill(pid, SIGSTOP)
        }
        for account in ["work", "home"] {
            let tookOver = await other.waitForLog(timeout: .seconds(Self.ttl + 5 + 10)) { $0.contains("lease taken; starting") && $0.contains("resource=\(account)") }
            #expect(tookOver, "\(account) not taken over; stderr: \(other.run.errors.suffix(3000))")
        }
        if fault == .paused {
            kill(pid, SIGCONT)
            #expect(await owner.waitForLog(timeout: .seconds(30)) { $0.contains("lease lost; transport stopped here") }, "stderr: \(owner.run.errors.suffix(3000))")
        }
        try await Self.send(["marker"], from: alice)
        #expect(await Received.message(bob.log, body: "[work] alice: marker", timeout: .seconds(90)) != nil, "stderr: \(other.run.errors.suffix(3000))")
        let received = await Received.bodies(bob.log).filter { !$0.contains("marker") }.map { String($0.dropFirst("[work] alice: ".count)) }
        let twice = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        let lost = Set(sent).subtracting(received)
        let lines = other.logLines.filter { ["in-doubt", "resumption failed", "stream resumed", "caught up", "inherited"].contains(where: $0.contains) }
        print("both accounts on one owner, \(fault): received \(received.count), lost \(lost.count), twice \(twice.count) \(twice.prefix(10))\n" + lines.joined(separator: "\n"))
        #expect(lost.isEmpty, "lost \(lost.sorted().prefix(10))")
        #expect(twice.isEmpty, "twice \(twice.prefix(10))")
        #expect(other.stop() == 0, "stderr: \(other.run.errors.suffix(2000))")
        await alice.stop()
        await bob.stop()
    }
}
