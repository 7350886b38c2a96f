import IntegrationSupport
import Testing

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
