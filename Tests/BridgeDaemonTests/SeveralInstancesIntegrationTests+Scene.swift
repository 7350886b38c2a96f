import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

extension SeveralInstancesIntegrationTests {
    /// A fault test's setting: Prosody with its archive, the instances on one PostgreSQL
    /// state, alice and bob online, home and work each online on its owner, and the server
    /// older than the outage to come (lease_ttl and a little), or it would look restarted.
    struct Scene {
        let server: ProsodyServer
        let bridges: [BridgeDaemon]
        let alice: TestSession
        let bob: TestSession
        let homeOwner: Int

        /// Every bridge's log tail, for a failed expectation.
        var errors: String { self.bridges.map { $0.run.errors.suffix(2000) }.joined(separator: "\n---\n") }

        /// What bob received of alice's `sent` (relayed by work as "[work] alice: …"), markers
        /// left out: how many, how many lost and how many twice (and which, the first ten).
        func tally(_ sent: [String]) async -> (received: Int, lost: Int, duplicated: Int, twice: [String]) {
            let received = await Received.bodies(self.bob.log).filter { !$0.contains("marker") }.map { String($0.dropFirst("[work] alice: ".count)) }
            let twice = Dictionary(grouping: received, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
            return (received.count, Set(sent).subtracting(received).count, twice.count, Array(twice.prefix(10)))
        }
    }

    /// Runs `body` in a ``Scene`` of `names` instances (on `database`, else a fresh one on
    /// the shared server), and stops what it started.
    static func withScene(
        names: [String] = ["node-a", "node-b"], database: (url: String, password: String)? = nil, _ body: (Scene) async throws -> Void
    ) async throws {
        var options = ProsodyServer.Options()
        options.archive = true
        let server = try await ProsodyServer.started(options, accounts: DaemonScenario.users("alice", "bob", "work", "home"))
        defer { server.shutdown() }
        let bridges = try await Self.start(on: server, database: database, names: names)
        defer { bridges.forEach { $0.terminate() } }
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        guard let homeOwner = await Self.owner(of: "home", among: bridges), let workOwner = await Self.owner(of: "work", among: bridges) else {
            Issue.record("no instance took the leases; stderr:\n\(bridges.map { $0.run.errors.suffix(3000) }.joined(separator: "\n---\n"))")
            return
        }
        try await bridges[homeOwner].waitOnline(["home"])
        try await bridges[workOwner].waitOnline(["work"])
        #expect(await bob.waitForServerUptime(atLeast: Self.ttl + 3), "the server does not report its uptime (XEP-0012)")
        try await body(Scene(server: server, bridges: bridges, alice: alice, bob: bob, homeOwner: homeOwner))
        await alice.stop()
        await bob.stop()
    }
}
