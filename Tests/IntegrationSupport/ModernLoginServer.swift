import TestServers

/// The servers that offer SASL2 (XEP-0388), Bind 2 (XEP-0386) and FAST (XEP-0484): Prosody
/// 13 with Debian's community modules, and ejabberd 24.12 (built in, `mod_auth_fast`).
public enum ModernLoginServer: String, CaseIterable, CustomStringConvertible, Sendable {
    case prosody13 = "Prosody 13"
    case ejabberd = "ejabberd 24.12"

    public var description: String { self.rawValue }

    /// Starts one with `accounts`; `archive`: Prosody's `mod_mam` (ejabberd's fixture always
    /// archives).
    public func start(accounts: [(String, String)], archive: Bool = false) async throws -> any TestXMPPServer {
        switch self {
        case .prosody13:
            var options = ProsodyServer.Options()
            options.release = .stable
            options.sasl2 = true
            options.archive = archive
            return try await ProsodyServer.started(options, accounts: accounts)
        case .ejabberd:
            return try await EjabberdServer.started(accounts: accounts)
        }
    }
}
