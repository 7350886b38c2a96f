import Foundation
import IntegrationSupport
import TestServers
import TestSupport

/// The one set-up of the daemon tests (issue 40): a throwaway Prosody (domain example.test,
/// every user's password "pw"), the contacts' own sessions, a `bridge.toml` for the bridge's
/// `accounts` and the test's locals and channels (``BridgeConfigFile``), and `xmpp-bridge
/// run` started on it, its accounts online and its sockets listening.
struct DaemonScenario {
    let server: ProsodyServer
    let config: String
    let bridge: BridgeDaemon
    /// The contacts' sessions by user name, started before the bridge.
    let contacts: [String: TestSession]

    /// Starts the server with `accounts`, `contacts` and `others` (users nobody logs in as
    /// yet) and runs `prepare` on it (rosters, say); starts the contacts' sessions, then the
    /// bridge with `rest` after the accounts (and `bridge`, more lines of its `[bridge]`
    /// table; `accountSettings`, more lines of each account's); waits until the accounts in `online` (all of them when nil) are online
    /// (unless `waitsOnline` is false: a bridge that ends by itself) and each of `sockets`
    /// (paths in the server's directory) listens. `contactsFirst` false: the contacts' sessions
    /// start once the bridge's accounts are online, for tests of what they see come online.
    static func start(
        accounts: [String], contacts: [String] = [], others: [String] = [], bridge settings: String = "", accountSettings: String = "", rest: String,
        stdin: String = "/dev/null",
        sockets: [String] = [], online: [String]? = nil, waitsOnline: Bool = true, contactsFirst: Bool = true, server options: ProsodyServer.Options = .init(),
        prepare: (ProsodyServer) async throws -> Void = { _ in }
    ) async throws -> DaemonScenario {
        let server = try await ProsodyServer.started(options, accounts: (contacts + others + accounts).map { ($0, "pw") })
        var sessions: [String: TestSession] = [:]
        do {
            try await prepare(server)
            if contactsFirst { for contact in contacts { sessions[contact] = try await TestSession.start(contact, on: server) } }
            let config = try BridgeConfigFile.write(for: server, accounts: accounts, bridge: settings, accountSettings: accountSettings, rest: rest)
            let bridge = try BridgeDaemon.start(config: config, stdin: stdin, in: server.directory)
            do {
                if waitsOnline { try await bridge.waitOnline(online ?? accounts) }
                for socket in sockets { try await bridge.waitForSocket("\(server.directory)/\(socket)") }
                if !contactsFirst { for contact in contacts { sessions[contact] = try await TestSession.start(contact, on: server) } }
            } catch {
                bridge.terminate()
                throw error
            }
            return DaemonScenario(server: server, config: config, bridge: bridge, contacts: sessions)
        } catch {
            for session in sessions.values { await session.stop() }
            server.shutdown()
            throw error
        }
    }

    /// Starts the bridge again on the same configuration and state (after a kill -9 or a
    /// stop), and waits as ``start(accounts:contacts:others:rest:stdin:sockets:waitsOnline:)``
    /// does for `accounts` and `sockets`. The caller ends it (`defer { again.terminate() }`).
    func startAgain(accounts: [String] = [], sockets: [String] = []) async throws -> BridgeDaemon {
        let bridge = try BridgeDaemon.start(config: self.config, in: self.server.directory)
        do {
            try await bridge.waitOnline(accounts)
            for socket in sockets { try await bridge.waitForSocket(self.path(socket)) }
        } catch {
            bridge.terminate()
            throw error
        }
        return bridge
    }

    /// `name` in the server's directory (where the state, sockets and FIFOs are).
    func path(_ name: String) -> String { "\(self.server.directory)/\(name)" }

    /// The session of contact `name` (a test failure when it was not started).
    func contact(_ name: String) throws -> TestSession {
        guard let session = self.contacts[name] else { throw TestFailure("no contact \(name) in this scenario") }
        return session
    }

    /// Ends what is left: the bridge if it still runs, then the server (for a `defer`).
    func shutdown() {
        self.bridge.terminate()
        self.server.shutdown()
    }

    /// The channel most daemon tests need: local `name` of `kind` (at `path`, with `options`
    /// as extra TOML lines) as a member with `direction`, to `jid` through account `via`.
    static func localChannel(
        _ name: String, kind: String, path: String? = nil, options: [String] = [], direction: String = "in", to jid: String = "bob@example.test",
        via account: String = "home", format: String = "{body}"
    ) -> String {
        var local = "[local.\(name)]\nkind = \"\(kind)\"\n"
        if let path { local += "path = \"\(path)\"\n" }
        for option in options { local += option + "\n" }
        return local + """

            [channels.\(name)]
            format = "\(format)"
            members = [
              { local = "\(name)", direction = "\(direction)" },
              { account = "\(account)", jid = "\(jid)", direction = "out" },
            ]
            """
    }
}

extension DaemonScenario {
    /// Users of the test server by name, each with the password "pw".
    static func users(_ names: String...) -> [(String, String)] {
        names.map { ($0, "pw") }
    }

    /// A scenario around a bridge another set-up started on `server` (a gateway's, with its
    /// component), with the sessions of `contacts` started now.
    init(server: ProsodyServer, config: String, bridge: BridgeDaemon, contacts names: [String]) async throws {
        var sessions: [String: TestSession] = [:]
        for name in names { sessions[name] = try await TestSession.start(name, on: server) }
        self.init(server: server, config: config, bridge: bridge, contacts: sessions)
    }
}
