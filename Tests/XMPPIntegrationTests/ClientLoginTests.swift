import Foundation
import IntegrationSupport
import Logging
import NIOPosix
import TestServers
import Testing
import XMPP

/// Login, TLS and binding against a real Prosody started by the test (RFC 6120 §5–§7).
@Suite("Login against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(2)))
struct ClientLoginTests {
    let client = XMPPClient(logger: IntegrationEnvironment.logger("login-test"))

    /// What a login picks on the tests' Prosody: 13 offers channel binding (`tls-exporter`,
    /// RFC 9266), so the -PLUS variant of the same hash; 0.12 offers none.
    static func expected(_ mechanism: SASLMechanism) -> SASLMechanism {
        guard ProsodyRelease.testDefault == .stable else { return mechanism }
        switch mechanism {
        case .scramSHA256: return .scramSHA256Plus
        case .scramSHA1: return .scramSHA1Plus
        default: return mechanism
        }
    }

    @Test("STARTTLS + SCRAM-SHA-256 login binds a server-assigned resource")
    func startTLSLogin() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "s3cret <&>")])
        defer { server.shutdown() }
        let connection = try await self.client.connect(
            configuration: IntegrationEnvironment.configuration("alice", on: server), password: "s3cret <&>"
        )
        #expect(connection.mechanism == Self.expected(.scramSHA256))
        #expect(connection.jid.bare.description == "alice@example.test")
        #expect(connection.jid.resourcepart?.isEmpty == false)
        #expect(connection.target.tlsMode == .startTLS)
        await connection.close()
        #expect(!connection.isActive)
    }

    @Test("a reconnect of the same client derives no SCRAM key again; a wrong password still fails")
    func reconnectSkipsPBKDF2() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        let client = XMPPClient(logger: IntegrationEnvironment.logger("login-test"))
        let configuration = try IntegrationEnvironment.configuration("alice", on: server)
        for _ in 0..<3 {
            let connection = try await client.connect(configuration: configuration, password: "pw")
            await connection.close()
        }
        #expect(client.scramKeys.derivationCount == 1)
        await #expect(throws: XMPPClientError.self) { _ = try await client.connect(configuration: configuration, password: "wrong") }
        #expect(client.scramKeys.derivationCount == 2)
    }

    @Test("Direct TLS (XEP-0368) login with a configured resource")
    func directTLSLogin() async throws {
        let server = try await ProsodyServer.started(accounts: [("bob", "pw")])
        defer { server.shutdown() }
        let connection = try await self.client.connect(
            configuration: IntegrationEnvironment.configuration("bob", on: server, resource: "bridge", tlsMode: .directTLS),
            password: "pw"
        )
        #expect(connection.jid.description == "bob@example.test/bridge")
        #expect(connection.mechanism == Self.expected(.scramSHA256))
        await connection.close()
    }

    @Test("SCRAM-SHA-1 is used where the server only offers it")
    func scramSHA1() async throws {
        var options = ProsodyServer.Options()
        options.passwordHash = "SHA-1"
        let server = try await ProsodyServer.started(options, accounts: [("carol", "pw")])
        defer { server.shutdown() }
        let connection = try await self.client.connect(configuration: IntegrationEnvironment.configuration("carol", on: server), password: "pw")
        #expect(connection.mechanism == Self.expected(.scramSHA1))
        await connection.close()
    }

    @Test("a wrong password is a typed authentication error naming the account")
    func wrongPassword() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "right")])
        defer { server.shutdown() }
        let configuration = try IntegrationEnvironment.configuration("alice", on: server)
        do throws(XMPPClientError) {
            let connection = try await self.client.connect(configuration: configuration, password: "wrong")
            await connection.close()
            Issue.record("login with a wrong password succeeded")
        } catch {
            guard case .authenticationFailed(let account, let saslError) = error else {
                Issue.record("expected authenticationFailed, got \(error)")
                return
            }
            #expect(account == "alice@example.test")
            #expect(saslError == .failure(condition: .notAuthorized, text: saslError.failureText))
            #expect(!"\(error)".contains("wrong"))
        }
    }

    @Test("a certificate for another name is refused before any credential is sent", arguments: [TLSMode.startTLS, .directTLS])
    func wrongCertificateName(mode: TLSMode) async throws {
        var options = ProsodyServer.Options()
        options.certificateName = "wrong.test"
        let server = try await ProsodyServer.started(options, accounts: [("alice", "pw")])
        defer { server.shutdown() }
        // Trust both certificates, so the only fault is the name.
        let configuration = try IntegrationEnvironment.configuration("alice", on: server, tlsMode: mode, trustFile: server.trustBundleFile)
        do throws(XMPPClientError) {
            let connection = try await self.client.connect(configuration: configuration, password: "pw")
            await connection.close()
            Issue.record("connected despite a certificate for wrong.test")
        } catch {
            guard case .tls(let tlsError) = error else {
                Issue.record("expected a TLS error, got \(error)")
                return
            }
            #expect(tlsError.kind == .certificateRejected)
            #expect(tlsError.certificateVerification?.contains("mismatch") == true)
        }
        #expect(!server.logTail(lines: 500).contains("Authenticated as"))
    }

    @Test("an untrusted self-signed certificate is refused")
    func untrustedCertificate() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        var configuration = try IntegrationEnvironment.configuration("alice", on: server)
        configuration.tls.additionalTrustRootsFile = nil
        do throws(XMPPClientError) {
            _ = try await self.client.connect(configuration: configuration, password: "pw")
            Issue.record("connected to an untrusted server")
        } catch {
            guard case .tls(let tlsError) = error else {
                Issue.record("expected a TLS error, got \(error)")
                return
            }
            #expect(tlsError.kind == .certificateRejected)
        }
    }

    @Test("a server without TLS is refused unless plaintext to loopback was allowed")
    func serverWithoutTLS() async throws {
        var options = ProsodyServer.Options()
        options.tls = false
        let server = try await ProsodyServer.started(options, accounts: [("alice", "pw")])
        defer { server.shutdown() }
        let strict = try IntegrationEnvironment.configuration("alice", on: server)
        do throws(XMPPClientError) {
            _ = try await self.client.connect(configuration: strict, password: "pw")
            Issue.record("authenticated without TLS")
        } catch {
            #expect(error == .tlsNotOffered)
        }
        #expect(!server.logTail(lines: 500).contains("Authenticated as"))

        let relaxed = try IntegrationEnvironment.configuration("alice", on: server, tlsMode: .plaintextOnLoopback)
        let connection = try await self.client.connect(configuration: relaxed, password: "pw")
        #expect(connection.jid.bare.description == "alice@example.test")
        await connection.close()
    }

    @Test("plaintext to a non-loopback host is a configuration error before any traffic")
    func plaintextNeedsLoopback() async throws {
        var configuration = XMPPClientConfiguration(jid: try JID("alice@example.test"), tlsMode: .plaintextOnLoopback)
        configuration.host = "example.test"
        await #expect(throws: XMPPClientError.self) {
            _ = try await self.client.connect(configuration: configuration, password: "pw")
        }
    }

    @Test("two logins of one account with different resources are both bound")
    func twoResources() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        async let first = self.client.connect(configuration: IntegrationEnvironment.configuration("alice", on: server, resource: "one"), password: "pw")
        async let second = self.client.connect(configuration: IntegrationEnvironment.configuration("alice", on: server, resource: "two"), password: "pw")
        let (a, b) = try await (first, second)
        #expect(a.jid.resourcepart == "one")
        #expect(b.jid.resourcepart == "two")
        #expect(a.isActive && b.isActive)
        await a.close()
        await b.close()
    }

    @Test("a refused TCP connection is a connect error, not a hang")
    func connectionRefused() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        var configuration = try IntegrationEnvironment.configuration("alice", on: server)
        server.stop()
        configuration.connectTimeout = .seconds(2)
        do throws(XMPPClientError) {
            _ = try await self.client.connect(configuration: configuration, password: "pw")
            Issue.record("connected to a stopped server")
        } catch {
            guard case .connectFailed(let attempts) = error else {
                Issue.record("expected connectFailed, got \(error)")
                return
            }
            #expect(attempts.count == 1)
        }
    }
}

extension SASLError {
    fileprivate var failureText: String? {
        if case .failure(_, let text) = self { return text }
        return nil
    }
}
