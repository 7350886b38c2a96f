import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The gateway tests' set-up: `[gateway.home]` on a test server's component listener,
/// with `alice` linked to the bridge account `home`.
enum GatewayFixture {
    static let secret = "s3cret-component"

    /// The `[gateway.home]` table for `domain` on `port`, its secret in a 0600 file, and
    /// each `(user, account)` in `users`.
    static func table(domain: String, port: Int, in directory: String, users: [(String, String)], allow: [String] = ["*@example.test"], extra: String = "") throws -> String {
        try "\(Self.secret)\n".write(toFile: "\(directory)/gateway.secret", atomically: true, encoding: .utf8)
        chmod("\(directory)/gateway.secret", 0o600)
        var text = """
            [gateway.home]
            component = "\(domain)"
            host = "127.0.0.1"
            port = \(port)
            secret_file = "gateway.secret"
            name = "Home account"
            registration = "allowlist"
            allow = [\(allow.map { "\"\($0)\"" }.joined(separator: ", "))]
            \(extra)

            """
        for (user, account) in users {
            text += "[[gateway.home.user]]\njid = \"\(user)\"\naccount = \"\(account)\"\n\n"
        }
        return text
    }

    /// The puppet JID standing for `contact` on `domain` (XEP-0106).
    static func puppet(_ contact: String, on domain: String) throws -> JID {
        try JID(localpart: JIDEscaping.escape(contact), domainpart: domain)
    }
}

extension BridgeDaemon {
    /// Waits until the gateway's component has connected (after `count - 1` earlier times).
    func waitComponentConnected(count: Int = 1, timeout: Duration = .seconds(20)) async throws {
        let connected = await eventuallyValue(timeout: timeout, every: .milliseconds(50)) { () -> Bool? in
            if self.logLines.filter({ $0.contains("component connected") }).count >= count { return true }
            return self.run.process.isRunning ? nil : false
        }
        guard connected == true else { throw TestFailure("the gateway's component did not connect; stderr:\n\(self.run.errors.suffix(4000))") }
    }
}

/// bob's numbered messages to the linked account `home`, sent in the background, and what
/// alice got of them through bob's puppet.
struct GatewayBurst {
    let sent: [String]
    let prefix: String
    let sender: Task<Void, any Error>
    let bob: TestSession

    static func start(from bob: TestSession, prefix: String, count: Int) throws -> GatewayBurst {
        let home = try JID("home@example.test")
        let sent = (1...count).map { String(format: "\(prefix) %03d", $0) }
        let session = bob.session
        let sender = Task {
            for (index, body) in sent.enumerated() {
                try await session.send(Message(type: .chat, to: home, id: "m\(index)", body: body))
            }
        }
        return GatewayBurst(sent: sent, prefix: prefix, sender: sender, bob: bob)
    }

    /// Once a marker bob sends after the burst reached alice: what she got of the burst,
    /// how many were lost and how many came more than once.
    func tally(at alice: TestSession, bridge: BridgeDaemon) async throws -> (received: [String], lost: Int, duplicated: Int) {
        try await self.bob.session.send(Message(type: .chat, to: try JID("home@example.test"), id: "marker", body: "marker"))
        #expect(await Received.message(alice.log, body: "marker", timeout: .seconds(60)) != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        let received = await Received.bodies(alice.log).filter { $0.hasPrefix(self.prefix + " ") }
        return (received, Set(self.sent).subtracting(received).count, received.count - Set(received).count)
    }
}
