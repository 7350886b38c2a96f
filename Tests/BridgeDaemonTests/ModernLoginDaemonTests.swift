import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's accounts on servers that offer SASL2, Bind 2 and FAST (issue 43), with no
/// resource of their own, so they bind with Bind 2: alice → work (bridge) → home (bridge) →
/// bob. ejabberd 24.12 deletes the offline messages of such a login when the archive is on
/// (the fixture's is), so what alice says while the bridge is down reaches bob only through
/// the archive catch-up; Prosody 13 keeps them and sends them too. Either way: every one
/// once.
@Suite("modern login with the daemon", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(3)))
struct ModernLoginDaemonTests {
    static func start(_ kind: ModernLoginServer) async throws -> any TestXMPPServer {
        try await kind.start(accounts: ["alice", "bob", "work", "home"].map { ($0, "pw") }, archive: true)
    }

    @Test(
        "Bind 2 and a FAST token kept in the state: the restarted bridge logs in with the token, and the 20 messages alice sent while it was down reach bob once each",
        arguments: ModernLoginServer.allCases
    )
    func restartWithToken(server kind: ModernLoginServer) async throws {
        let server = try await Self.start(kind)
        defer { server.shutdown() }
        let config = try BridgeConfigFile.write(for: server, accounts: ["work", "home"], resource: nil, rest: ArchiveCatchUpIntegrationTests.link)
        let alice = try await TestSession.start("alice", on: server)
        let bob = try await TestSession.start("bob", on: server)
        let work = try JID("work@\(server.domain)")
        let first = try BridgeDaemon.start(config: config, in: server.directory)
        defer { first.terminate() }
        try await first.waitOnline(["work", "home"])
        let loggedIn = await first.waitForLog { $0.contains("session established") && $0.contains("work@\(server.domain)") }
        #expect(loggedIn)
        let firstLogin = first.logLines.first { $0.contains("session established") && $0.contains("work@\(server.domain)") } ?? ""
        #expect(firstLogin.contains("login=sasl2 SCRAM-") && firstLogin.contains("bind2") && firstLogin.contains("new-token"), "\(firstLogin)")
        try await alice.session.send(Message(type: .chat, to: work, body: "before"))
        #expect(await Received.message(bob.log, body: "before", timeout: .seconds(30)) != nil, "stderr: \(first.run.errors.suffix(3000))")
        #expect(first.stop() == 0, "stderr: \(first.run.errors.suffix(2000))")

        let sent = (1...20).map { String(format: "while down %02d", $0) }
        try await alice.session.send(sent.map { Message(type: .chat, to: work, body: $0) })

        let second = try BridgeDaemon.start(config: config, in: server.directory)
        defer { second.terminate() }
        try await second.waitOnline(["work", "home"])
        let secondLogin = second.logLines.first { $0.contains("session established") && $0.contains("work@\(server.domain)") } ?? ""
        #expect(secondLogin.contains("login=sasl2 HT-SHA-256-") && secondLogin.contains("bind2"), "the kept token logs in: \(secondLogin)")

        try await alice.session.send(Message(type: .chat, to: work, body: "marker"))
        #expect(await Received.message(bob.log, body: "marker", timeout: .seconds(60)) != nil, "stderr: \(second.run.errors.suffix(3000))")
        let received = await Received.bodies(bob.log).filter { $0 != "marker" && $0 != "before" }
        let lost = sent.filter { !received.contains($0) }
        let duplicated = Dictionary(grouping: received, by: { $0 }).values.reduce(0) { $0 + $1.count - 1 }
        #expect(lost.isEmpty && duplicated == 0, "lost \(lost), duplicated \(duplicated); stderr: \(second.run.errors.suffix(3000))")
        // The token the state keeps, and never in the log.
        let token = try Subprocess.run(
            "sqlite3", ["-readonly", "-cmd", ".timeout 5000", "\(server.directory)/bridge.sqlite", "SELECT token FROM logins WHERE transport = 'work';"]
        ).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.count >= 16, "no token in the state: '\(token)'")
        #expect(!(first.run.errors + second.run.errors).contains(token), "the token is in the log")
        #expect(second.stop() == 0)
        await alice.stop()
        await bob.stop()
    }
}
