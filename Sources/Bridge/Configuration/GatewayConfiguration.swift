import GatewayComponent
import XMPP

/// One `[gateway.NAME]` table of `bridge.toml`: an XMPP component (XEP-0114) whose
/// puppets stand for the contacts of linked accounts, with its configured users.
struct GatewayConfiguration: Sendable, Equatable {
    var name: String
    /// The component's domain, as declared on the server (`component`).
    var domain: String
    var host: String
    var port: Int
    var secret: PasswordSource
    /// The disco identity's name (`name`).
    var displayName: String?
    var registration: RegistrationPolicy
    var allow: [String]
    /// A component link to a non-loopback host (no TLS on XEP-0114; `allow_remote`).
    var allowRemote: Bool
    /// How often the server is pinged to find a dead link (`keepalive`, default 60 s).
    var keepalive: Duration
    /// The server's own domain, where keepalive pings go and privileges come from
    /// (`server_domain`; default: the component domain's parent, `work.example` for
    /// `home.work.example`).
    var serverDomain: String
    /// The largest stanza the server takes from the component (bytes, after escaping);
    /// longer deliveries are split into parts (`max_stanza_bytes`, default 64 KiB).
    var maxStanzaBytes: Int = 65_536
    /// `[[gateway.NAME.user]]`: users linked in the file.
    var users: [GatewayUser]

    /// The gateway's transport name: its own namespace beside accounts and locals
    /// (`[gateway.home]` may sit beside `[accounts.home]`).
    var transportName: String { Self.transportName(self.name) }

    static func transportName(_ name: String) -> String { "gateway.\(name)" }

    /// The default server domain: the component domain's parent.
    static func parentDomain(of domain: String) -> String {
        guard let dot = domain.firstIndex(of: "."), domain[domain.index(after: dot)...].contains(".") else { return domain }
        return String(domain[domain.index(after: dot)...])
    }

    static let keys = [
        "component", "host", "port", "secret_file", "secret_env", "name", "registration", "allow", "allow_remote", "keepalive", "server_domain",
        "max_stanza_bytes", "user",
    ]
    static let userKeys = ["jid", "account"]
}
