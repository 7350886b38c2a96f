import Logging
import Foundation
import Testing
import TestSupport

@testable import Bridge
@testable import BridgeCommand
@testable import BridgeState

/// Commands that work on the state database without a daemon never race one that is
/// starting (issue 13, defects 1 and 2).
@Suite("Instance lock and offline state access")
struct OfflineStateAccessTests {
    let folder = try! TemporaryFolder()

    func configuration(state: String) throws -> BridgeConfiguration {
        let file = try ConfigurationLoaderTests.write(
            """
            [bridge]
            state = "\(state)"
            [accounts.work]
            jid = "work@example.test"
            password_env = "WORK_PASSWORD"
            [channels.link]
            members = [{ account = "work", jid = "alice@example.test" }]
            """
        )
        var loader = ConfigurationLoader(file: file)
        return try loader.loadBridge()
    }

    @Test("a first run in a state folder that does not exist yet takes the lock (the folder is made 0700)")
    func lockMakesItsFolder() throws {
        let path = self.folder.path("new/deeper/bridge.sqlite.lock")
        let lock = try InstanceLock(path: path)
        var info = stat()
        #expect(stat(self.folder.path("new/deeper"), &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        withExtendedLifetime(lock) {}
    }

    @Test("a lock file that cannot be opened is not reported as another bridge")
    func unusableIsNotHeld() throws {
        try "x".write(toFile: self.folder.path("file"), atomically: true, encoding: .utf8)
        #expect {
            _ = try InstanceLock(path: self.folder.path("file/bridge.sqlite.lock"))
        } throws: { error in
            guard case .unusable = error as? InstanceLock.Failure else { return false }
            return true
        }
    }

    @Test("exclusive excludes everyone, shared excludes only exclusive")
    func modes() throws {
        let path = self.folder.path("bridge.sqlite.lock")
        do {
            let daemon = try InstanceLock(path: path)
            #expect(throws: InstanceLock.Failure.held(path: path)) { _ = try InstanceLock(path: path, mode: .shared) }
            #expect(throws: InstanceLock.Failure.held(path: path)) { _ = try InstanceLock(path: path) }
            withExtendedLifetime(daemon) {}
        }
        let reader = try InstanceLock(path: path, mode: .shared)
        let another = try InstanceLock(path: path, mode: .shared)
        #expect(throws: InstanceLock.Failure.held(path: path)) { _ = try InstanceLock(path: path) }
        withExtendedLifetime((reader, another)) {}
    }

    @Test("the daemon waits out a command's short hold (manual clock), and gives up after its wait")
    func daemonWaitsForACommand() async throws {
        let path = self.folder.path("bridge.sqlite.lock")
        let clock = ManualClock()
        var reader: InstanceLock? = try InstanceLock(path: path, mode: .shared)
        let daemon = Task { try await InstanceLock.acquire(path: path, wait: .seconds(3), clock: clock) }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(20))
        await clock.waitForSleepers()
        reader = nil  // the command is done
        clock.advance(by: .milliseconds(20))
        let lock = try await daemon.value
        withExtendedLifetime((lock, reader)) {}

        // Tries at 0, 20 and 40 ms; at 40 ms its wait is over.
        let second = Task { try await InstanceLock.acquire(path: path, wait: .milliseconds(40), clock: clock) }
        for _ in 0..<2 {
            await clock.waitForSleepers()
            clock.advance(by: .milliseconds(20))
        }
        await #expect(throws: InstanceLock.Failure.held(path: path)) { _ = try await second.value }
    }

    @Test("status while a daemon holds the lock answers 'starting' and creates, migrates and writes nothing")
    func statusWhileStarting() throws {
        let state = self.folder.path("state/bridge.sqlite")
        let configuration = try self.configuration(state: state)
        let daemon = try InstanceLock(path: state + ".lock")
        for operation in [ControlRequest.Operation.status, .list, .queueList, .add, .queueDrop] {
            var request = ControlRequest(op: operation)
            if operation == .add {
                request.channel = "link"
                request.transport = "work"
                request.address = "carol@example.test"
            }
            let response = OfflineStateAccess(configuration: configuration, logger: Logger(label: "test")).apply(request)
            #expect(!response.ok)
            #expect(response.error == OfflineStateAccess.starting, "\(operation)")
        }
        #expect(!FileManager.default.fileExists(atPath: state))
        withExtendedLifetime(daemon) {}
    }

    @Test("without a daemon: status on no database creates none; a route edit migrates under the lock; status reads it read-only")
    func offlineReadsAndWrites() throws {
        let state = self.folder.path("bridge.sqlite")
        let configuration = try self.configuration(state: state)
        let access = OfflineStateAccess(configuration: configuration, logger: Logger(label: "test"))
        let empty = access.apply(ControlRequest(op: .status))
        #expect(empty.ok)
        #expect(empty.transports?.map(\.name) == ["work"])
        #expect(!FileManager.default.fileExists(atPath: state))

        var add = ControlRequest(op: .add, channel: "link", transport: "work")
        add.address = "carol@example.test"
        #expect(access.apply(add).ok)
        #expect(FileManager.default.fileExists(atPath: state))
        let listing = access.apply(ControlRequest(op: .list))
        #expect(listing.ok)
        #expect(listing.channels?.first?.members.contains { $0.address == "carol@example.test" } == true)
        // A reader holds the lock shared only: the daemon could take it right after.
        _ = try InstanceLock(path: state + ".lock")
    }

    @Test("a database with missing migrations is inspected by nobody but the daemon")
    func olderDatabaseRefusedReadOnly() throws {
        let state = self.folder.path("bridge.sqlite")
        // An empty SQLite file: no migration applied.
        _ = FileManager.default.createFile(atPath: state, contents: nil)
        #expect(throws: StateStoreError.self) { _ = try SQLiteStateStore(readingAt: state) }
        let response = OfflineStateAccess(configuration: try self.configuration(state: state), logger: Logger(label: "test")).apply(ControlRequest(op: .status))
        #expect(!response.ok)
        #expect(response.error?.contains("`xmpp-bridge run` migrates it") == true, "\(response.error ?? "-")")
    }
}
