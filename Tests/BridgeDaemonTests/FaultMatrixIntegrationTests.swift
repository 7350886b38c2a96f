import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

/// The fault matrix (issue 39): every path users run (FIFO → account → contact; a link of
/// two accounts, a burst each way; two linked rooms, a burst each way) against every server
/// fault (the server closes the bridge's streams, drops its TCP links, is killed -9 and
/// restarted, is stopped and started), on Prosody 0.12 and 13 and ejabberd 24.12, with and
/// without the server's uptime and version (`mod_uptime`/`mod_last`, `mod_version`).
///
/// Each cell asserts 0 lost, and 0 twice except what the bridge knowingly sent again: an
/// archived in-doubt message a crashed server may not have routed (its log's `uncertain`;
/// Prosody archives a sender's copy before routing it, so the one stanza it was handling
/// when it died; ejabberd routes between processes after archiving, so any). Each prints
/// one `[fault-matrix]` line; `Benchmarks/faults/table.sh` makes the table of them in docs/nothing-lost.md.
@Suite("fault matrix: every path, every server fault, every server", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(3)))
struct FaultMatrixIntegrationTests {
    /// The servers of the matrix.
    enum Server: String, CaseIterable, Sendable, CustomStringConvertible {
        case prosody012 = "Prosody_0.12"
        case prosody13 = "Prosody_13"
        case ejabberd = "ejabberd_24.12"

        var description: String { self.rawValue }

        func start(serverInfo: Bool) throws -> any TestXMPPServer {
            let accounts = ["alice", "bob", "a", "b"].map { ($0, "pw") }
            switch self {
            case .prosody012, .prosody13:
                var options = ProsodyServer.Options()
                options.release = self == .prosody13 ? .stable : .oldstable
                options.archive = true
                options.adminShell = true
                options.rooms = true
                options.serverInfo = serverInfo
                return try ProsodyServer.start(options, accounts: accounts)
            case .ejabberd:
                return try EjabberdServer.start(accounts: accounts, serverInfo: serverInfo)
            }
        }

        var enabled: Bool {
            switch self {
            case .prosody012: IntegrationEnvironment.isCI || ProsodyRelease.oldstable.missingPrerequisites.isEmpty
            case .prosody13: IntegrationEnvironment.isCI || ProsodyRelease.stable.missingPrerequisites.isEmpty
            case .ejabberd: IntegrationEnvironment.ejabberdEnabled
            }
        }
    }

    /// How many of the bridge's in-doubt messages a fault may leave sent twice: those it
    /// logged as sent again because the archive cannot vouch they were routed.
    static func check(_ outcome: FaultScene.Outcome, server: Server, fault: ServerFault, path: FaultScene.Path) {
        #expect(outcome.online != nil && outcome.last != nil, "\(outcome)\n\(outcome.sessionLog.joined(separator: "\n"))")
        #expect(outcome.lost.isEmpty, "\(outcome)\n\(outcome.sessionLog.joined(separator: "\n"))")
        // Only ejabberd acknowledges before routing (and only its archive is read for it).
        if server != .ejabberd || ![ServerFault.killed, .restarted].contains(fault) {
            #expect(outcome.lostByServer.isEmpty, "\(outcome)\n\(outcome.sessionLog.joined(separator: "\n"))")
        }
        switch (fault, server) {
        case (.killed, .prosody012), (.killed, .prosody13):
            // The one stanza per account Prosody was handling when it died.
            #expect(outcome.twice.count <= outcome.uncertain, "\(outcome)\n\(outcome.sessionLog.joined(separator: "\n"))")
            #expect(outcome.uncertain <= path.accounts.count, "\(outcome)")
        case (.killed, .ejabberd), (.restarted, .ejabberd):
            // At least once: ejabberd archives a sender's copy and routes it between
            // processes afterwards (a crash or a shutdown can cut either short), so what is
            // found may not have reached the contact. Only what was sent again can be twice.
            // What ejabberd acknowledged to a sender and then lost itself is counted apart
            // (``FaultScene/Outcome/lostByServer``).
            #expect(outcome.twice.count <= outcome.sentAgain, "\(outcome)\n\(outcome.sessionLog.joined(separator: "\n"))")
        case (.streamsClosed, _), (.connectionsDropped, _), (.restarted, .prosody012), (.restarted, .prosody13):
            #expect(outcome.twice.isEmpty, "\(outcome)\n\(outcome.sessionLog.joined(separator: "\n"))")
            #expect(outcome.uncertain == 0, "\(outcome)")
        }
    }

    /// `FAULT_MATRIX_CELLS=fifo:killed,link` runs only those cells (path, or path:fault
    /// with the fault's first word), to run one cell many times; unset runs every cell.
    static func selected(_ path: FaultScene.Path, _ fault: ServerFault) -> Bool {
        guard let cells = ProcessInfo.processInfo.environment["FAULT_MATRIX_CELLS"], !cells.isEmpty else { return true }
        let faultWord = fault.rawValue.prefix { $0 != " " }
        return cells.split(separator: ",").contains { cell in
            let parts = cell.split(separator: ":")
            return parts.first.map(String.init) == path.rawValue && (parts.count == 1 || parts[1] == faultWord)
        }
    }

    static func run(_ server: Server, _ path: FaultScene.Path, _ fault: ServerFault, serverInfo: Bool) async throws {
        guard Self.selected(path, fault) else { return }
        // Off the threads async tests share: a start takes seconds.
        let started = try await Subprocess.offThread { try server.start(serverInfo: serverInfo) }
        defer { started.shutdown() }
        let scene = FaultScene(path: path, server: started, label: "\(server) info=\(serverInfo ? "on" : "off")")
        Self.check(try await scene.run(fault), server: server, fault: fault, path: path)
    }

    @Test("Prosody 0.12", .enabled(if: Server.prosody012.enabled), arguments: FaultScene.Path.allCases, ServerFault.allCases)
    func prosody012(path: FaultScene.Path, fault: ServerFault) async throws {
        try await Self.run(.prosody012, path, fault, serverInfo: true)
    }

    @Test("Prosody 0.12 without mod_uptime and mod_version", .enabled(if: Server.prosody012.enabled), arguments: FaultScene.Path.allCases, ServerFault.allCases)
    func prosody012WithoutServerInfo(path: FaultScene.Path, fault: ServerFault) async throws {
        try await Self.run(.prosody012, path, fault, serverInfo: false)
    }

    @Test("Prosody 13", .enabled(if: Server.prosody13.enabled), arguments: FaultScene.Path.allCases, ServerFault.allCases)
    func prosody13(path: FaultScene.Path, fault: ServerFault) async throws {
        try await Self.run(.prosody13, path, fault, serverInfo: true)
    }

    @Test("Prosody 13 without mod_uptime and mod_version", .enabled(if: Server.prosody13.enabled), arguments: FaultScene.Path.allCases, ServerFault.allCases)
    func prosody13WithoutServerInfo(path: FaultScene.Path, fault: ServerFault) async throws {
        try await Self.run(.prosody13, path, fault, serverInfo: false)
    }

    @Test("ejabberd 24.12", .enabled(if: Server.ejabberd.enabled), arguments: FaultScene.Path.allCases, ServerFault.allCases)
    func ejabberd(path: FaultScene.Path, fault: ServerFault) async throws {
        try await Self.run(.ejabberd, path, fault, serverInfo: true)
    }

    @Test("ejabberd 24.12 without mod_last and mod_version", .enabled(if: Server.ejabberd.enabled), arguments: FaultScene.Path.allCases, ServerFault.allCases)
    func ejabberdWithoutServerInfo(path: FaultScene.Path, fault: ServerFault) async throws {
        try await Self.run(.ejabberd, path, fault, serverInfo: false)
    }
}
