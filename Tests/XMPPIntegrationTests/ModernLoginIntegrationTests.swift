import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

@testable import XMPP

/// SASL2 (XEP-0388) with Bind 2 (XEP-0386), inline stream management (XEP-0198), FAST
/// (XEP-0484), channel binding (XEP-0440, RFC 9266) and downgrade protection (XEP-0474)
/// against the servers that offer them: Prosody 13 with Debian's community modules, and
/// ejabberd 24.12 (SASL2 and Bind 2 built in, `mod_auth_fast`).
@Suite("modern login against Prosody 13 and ejabberd 24.12", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(3)))
struct ModernLoginIntegrationTests {
    static func login(token: FASTToken? = nil) -> SASL2Login {
        SASL2Login(
            userAgent: .init(id: LoginStateKeeper.makeUserAgentID(), software: "xmpp-bridge"), bindTag: "xmpp-bridge", token: token,
            requestsToken: true
        )
    }

    @Test("one round trip: SCRAM-…-PLUS bound to tls-exporter, a resource bound by Bind 2 with stream management on, and a FAST token; then the token logs in without SCRAM, and a forged one falls back to the password", arguments: ModernLoginServer.allCases)
    func loginAndToken(server kind: ModernLoginServer) async throws {
        let server = try await kind.start(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        let client = XMPPClient(logger: IntegrationEnvironment.logger("modern-login"))
        var configuration = try IntegrationEnvironment.configuration("alice", on: server)
        var login = Self.login()
        configuration.sasl2 = login
        let first = try await client.connect(configuration: configuration, password: "pw")
        #expect(first.login.profile == .sasl2, "\(first.login.summary)")
        #expect(first.login.mechanism?.hasSuffix("-PLUS") == true && first.login.channelBinding == .tlsExporter, "\(first.login.summary)")
        #expect(first.login.downgradeProtected, "XEP-0474's h was not checked: \(first.login.summary)")
        #expect(first.login.boundInline && first.jid.resourcepart?.hasPrefix("xmpp-bridge") == true, "\(first.jid)")
        #expect(first.login.streamManagementAnswer?.name == "enabled", "\(String(describing: first.login.streamManagementAnswer))")
        #expect(first.login.carbonsEnabled)
        // STARTTLS's header and <starttls/>, the secured header, <authenticate> and the SCRAM
        // response: five, where RFC 6120's way takes seven (a header after SASL, the bind)
        // and the session three more (<enable/>, carbons' disco and enable).
        #expect(first.login.roundTrips == 5, "\(first.login.summary)")
        let token = try #require(first.login.newToken, "no FAST token: \(first.login.summary)")
        #expect(token.expiry > Date())
        await first.close()
        #expect(client.scramKeys.derivationCount == 1)

        login.token = token
        configuration.sasl2 = login
        let second = try await client.connect(configuration: configuration, password: "pw")
        #expect(second.login.usedToken && second.login.mechanism == token.mechanism.rawValue, "\(second.login.summary)")
        #expect(!second.login.tokenRefused && second.login.boundInline)
        #expect(second.jid == first.jid, "one user agent, one Bind 2 resource")
        await second.close()

        login.token = FASTToken(secret: token.secret + "-forged", expiry: token.expiry, mechanism: token.mechanism)
        configuration.sasl2 = login
        let third = try await client.connect(configuration: configuration, password: "pw")
        #expect(third.login.tokenRefused && !third.login.usedToken && third.login.mechanism?.hasPrefix("SCRAM-") == true, "\(third.login.summary)")
        #expect(third.login.newToken != nil, "the password login asks for a new token")
        await third.close()
        #expect(client.scramKeys.derivationCount == 1, "SCRAM's key came from the cache: the token login derived none")

        configuration.sasl2 = nil
        let legacy = try await client.connect(configuration: configuration, password: "pw")
        #expect(legacy.login.profile == .sasl && legacy.login.roundTrips == 7, "RFC 6120's way: \(legacy.login.summary)")
        await legacy.close()
    }

    @Test("a wrong password over SASL2 is a typed authentication error, not a hang or a fallback", arguments: ModernLoginServer.allCases)
    func wrongPassword(server kind: ModernLoginServer) async throws {
        let server = try await kind.start(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        let client = XMPPClient(logger: IntegrationEnvironment.logger("modern-login"))
        var configuration = try IntegrationEnvironment.configuration("alice", on: server)
        configuration.sasl2 = Self.login()
        do {
            _ = try await client.connect(configuration: configuration, password: "wrong")
            Issue.record("logged in with a wrong password")
        } catch .authenticationFailed(_, .failure(let condition, _)) {
            #expect(condition == .notAuthorized)
        } catch {
            Issue.record("unexpected error: \(error)")
        }
    }

    @Test("a session over SASL2: messages flow; its dropped connection resumes inline, and nothing is lost or doubled", arguments: ModernLoginServer.allCases)
    func sessionResumesInline(server kind: ModernLoginServer) async throws {
        let server = try await kind.start(accounts: [("bob", "pw"), ("home", "pw")])
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        let recorder = LogRecorder()
        let home = try await TestSession.start(
            "home", on: server, reconnect: .init(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(500)),
            sasl2: Self.login(), logger: recorder.logger("modern-login-session")
        )
        let session = home.session
        let connection = try #require(await session.current.connection)
        #expect(connection.login.profile == .sasl2 && connection.login.boundInline, "\(connection.login.summary)")
        try await session.sendAcknowledged([Message(type: .chat, to: bob.jid.bare, body: "before")])
        #expect(await bob.log.waitFor { if case .message(let message, nil) = $0 { message.body == "before" } else { false } } != nil)

        await session.dropConnection()
        #expect(await eventually(timeout: .seconds(20)) { recorder.messages.contains("stream resumed") }, "log: \(recorder.messages.suffix(20))")
        let resumed = try #require(await session.current.connection)
        #expect(resumed.resumeAnswer?.name == "resumed" && resumed.login.profile == .sasl2, "\(resumed.login.summary)")

        try await session.sendAcknowledged([Message(type: .chat, to: bob.jid.bare, body: "after")])
        try await bob.session.send(Message(type: .chat, to: resumed.jid, body: "to home"))
        #expect(await bob.log.waitFor { if case .message(let message, nil) = $0 { message.body == "after" } else { false } } != nil)
        #expect(await home.log.waitFor { if case .message(let message, nil) = $0 { message.body == "to home" } else { false } } != nil)
        // A marker after everything: nothing else arrives before it.
        try await session.sendAcknowledged([Message(type: .chat, to: bob.jid.bare, body: "marker")])
        #expect(await bob.log.waitFor { if case .message(let message, nil) = $0 { message.body == "marker" } else { false } } != nil)
        #expect(await bob.log.messages.compactMap(\.body) == ["before", "after", "marker"])
        #expect(await home.log.messages.compactMap(\.body) == ["to home"])
        #expect(!recorder.messages.contains { $0.contains("protocol error") }, "log: \(recorder.messages.suffix(20))")
        await home.stop()
        await bob.stop()
    }
}
