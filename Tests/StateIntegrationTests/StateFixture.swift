import Foundation
import IntegrationSupport
import Testing
import TestSupport

@testable import Bridge

/// The two implementations of ``StateStore`` the same tests run against (issue 26).
enum StateBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgresql

    var testDescription: String { self.rawValue }

    /// Both under CI; elsewhere PostgreSQL only when its server is installed.
    static var available: [StateBackend] {
        IntegrationEnvironment.postgresEnabled ? Self.allCases : [.sqlite]
    }
}

/// One test's state, opened (and opened again, as after a restart) with either store: a
/// SQLite file of its own, or a PostgreSQL database of its own on the shared server
/// (``SharedPostgres``). The files live in one folder for the test process, removed when
/// it exits (a store may outlive the fixture that opened it).
struct StateFixture: Sendable {
    let backend: StateBackend
    private let path: String?
    private let database: SharedPostgres.Database?

    /// The folder of every SQLite file the tests make, removed at exit.
    private static let folder: TemporaryFolder? = {
        let folder = try? TemporaryFolder()
        atexit { StateFixture.removeFolder() }
        return folder
    }()

    private static func removeFolder() {
        if let url = Self.folder?.url { try? FileManager.default.removeItem(at: url) }
    }

    init(_ backend: StateBackend) async throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            guard let folder = Self.folder else { throw TestFailure("cannot make a temporary folder") }
            self.path = folder.path("\(UUID().uuidString).sqlite")
            self.database = nil
        case .postgresql:
            self.path = nil
            self.database = try await SharedPostgres.freshDatabase()
        }
    }

    /// A store over this test's state; each call is a new process's view of it.
    func open(now: @escaping @Sendable () -> Date = { Date() }) throws -> any StateStore {
        switch self.backend {
        case .sqlite: try SQLiteStateStore(path: self.path!, now: now)
        case .postgresql: try PostgresStateStore(url: self.database!.url, password: self.database!.password, now: now)
        }
    }
}

/// A clock that advances one second per reading, from a whole-second epoch time (so dates
/// survive the stores' millisecond precision).
final class SteppingClock: @unchecked Sendable {
    private let lock = NSLock()
    private var readings = 0
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// The time of the n-th reading.
    func time(_ n: Int) -> Date { self.start.addingTimeInterval(TimeInterval(n)) }

    /// Reads the clock.
    var now: @Sendable () -> Date {
        { [self] in
            self.lock.withLock {
                defer { self.readings += 1 }
                return self.time(self.readings)
            }
        }
    }
}
