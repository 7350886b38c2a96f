import BridgeRelay
import Bridge
import BridgeState
import Foundation
import Logging

/// How a command (`status`, `route`, `queue`) works on the state database when no daemon
/// answers on the control socket. It never races a daemon that is starting: reads take the
/// instance lock shared and open the database read-only (no migration, nothing created);
/// writes take it exclusively and only then open (and migrate) the database. A lock held by
/// a daemon gets a clear "starting" answer instead. A PostgreSQL state is opened as it is.
struct OfflineStateAccess {
    let configuration: BridgeConfiguration
    /// Where applying a killed daemon's intake log is reported.
    let logger: Logger

    /// What a command says while a daemon holds the lock but does not answer yet.
    static let starting = "the bridge is starting (or not answering on its control socket): its state database is locked; try again in a moment"

    func apply(_ request: ControlRequest) -> ControlResponse {
        if let url = self.configuration.settings.stateURL {
            // PostgreSQL: each change is one transaction; the daemon's lock on the database
            // stands for the file lock.
            do {
                let store = try PostgresStateStore(url: url, password: try self.configuration.settings.statePassword?.read())
                // A change while a daemon runs on the database (on another host: this one's
                // control socket did not answer) would go behind its back: refused.
                if Self.writes(request.op) { try store.claimSoleInstance() }
                let response = RouteEditor(configuration: self.configuration, store: store).apply(request)
                // Instances on other hosts read the route table again (``ControlNotice``; a
                // command is no instance: its name is empty). The change is made either way.
                if response.ok, [.add, .remove].contains(request.op) {
                    do {
                        try store.announce(.routesChanged, from: "")
                    } catch {
                        self.logger.warning("route changed; the running instances could not be told (they read it at their next start or change)", metadata: ["error": "\(error)"])
                    }
                }
                return response
            } catch {
                return RouteEditor.failure("\(error)")
            }
        }
        let path = self.configuration.settings.statePath
        if (path as NSString).lastPathComponent == ":memory:" {
            // Nothing is kept between runs: nothing to lock or read.
            guard let store = try? SQLiteStateStore.inMemory() else { return RouteEditor.failure("cannot open an in-memory state") }
            return RouteEditor(configuration: self.configuration, store: store).apply(request)
        }
        let lockPath = path + ".lock"
        let writes = Self.writes(request.op)
        let lock: InstanceLock
        do {
            lock = try InstanceLock(path: lockPath, mode: writes ? .exclusive : .shared)
        } catch .held {
            return RouteEditor.failure(Self.starting)
        } catch {
            return RouteEditor.failure("\(error)")
        }
        defer { withExtendedLifetime(lock) {} }
        let store: any StateStore
        do {
            if writes {
                store = try Self.openForWriting(path: path, logger: self.logger)
            } else if FileManager.default.fileExists(atPath: path) {
                store = try SQLiteStateStore(readingAt: path)
            } else {
                // No database yet: nothing is queued, no route was changed; create nothing.
                store = try SQLiteStateStore.inMemory()
            }
        } catch {
            return RouteEditor.failure("\(error)")
        }
        return RouteEditor(configuration: self.configuration, store: store).apply(request)
    }

    /// The SQLite state at `path`, opened (and migrated) to be changed under the caller's
    /// exclusive lock; what a daemon killed mid-run left in its intake log goes in first, so
    /// the change is not undone by the next start.
    static func openForWriting(path: String, logger: Logger) throws -> SQLiteStateStore {
        let store = try SQLiteStateStore(path: path)
        if FileManager.default.fileExists(atPath: path + ".intake") {
            try Journal.replay(try IntakeLogFile(path: path + ".intake"), into: store, logger: logger)
        }
        return store
    }

    /// Whether `operation` changes the database.
    static func writes(_ operation: ControlRequest.Operation) -> Bool {
        switch operation {
        // history: what a killed daemon left in the intake log goes in first, and the
        // full-text index takes what it lacks, so a search sees every message.
        // omemo: OMEMO keys a killed daemon left in the intake log go in first.
        case .add, .remove, .queueRetry, .queueDrop, .gatewayRemove, .history, .omemoFingerprints, .omemoTrust, .omemoDistrust: true
        case .list, .status, .queueList, .roster, .reconnect, .rooms, .gatewayUsers: false
        }
    }
}
