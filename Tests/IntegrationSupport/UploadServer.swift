import TestServers

/// A Prosody with an HTTP File Upload service (XEP-0363, `mod_http_file_share`), for the
/// upload tests of the library and of the bridge's commands.
public enum UploadServer {
    /// The largest file the service takes.
    public static let limit = 2 * 1024 * 1024

    /// Starts one taking files up to ``limit``; every user's password is "pw". `httpHost`
    /// names the service's URLs (`localhost` for a client with only the system resolver).
    /// ``start(domain:users:httpHost:)`` off the shared threads (``ProsodyServer/started(_:accounts:)``).
    public static func started(domain: String = "example.test", users: [String] = ["alice"], httpHost: String? = nil) async throws -> ProsodyServer {
        try await Subprocess.offThread { try UploadServer.start(domain: domain, users: users, httpHost: httpHost) }
    }

    public static func start(domain: String = "example.test", users: [String] = ["alice"], httpHost: String? = nil) throws -> ProsodyServer {
        var options = ProsodyServer.Options()
        options.domain = domain
        options.fileShareSizeLimit = Self.limit
        options.fileShareHTTPHost = httpHost
        return try ProsodyServer.start(options, accounts: users.map { ($0, "pw") })
    }

    /// `count` random bytes (file contents no server could compress or guess).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
