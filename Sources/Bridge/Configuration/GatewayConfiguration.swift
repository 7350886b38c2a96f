import GatewayComponent
import XMPP

/// One `[gateway.NAME]` table of `bridge.toml`: an XMPP component (XEP-0114) whose
/// puppets stand for the contacts of linked accounts, with its configured users.
package struct GatewayConfiguration: Sendable, Equatable {
    package var name: String
    /// The component's domain, as declared on the server (`component`).
    package var domain: String
    package var host: String
    package var port: Int
    package var secret: PasswordSource
    /// The disco identity's name (`name`).
    package var displayName: String?
    package var registration: RegistrationPolicy
    package var allow: [String]
    /// A component link to a non-loopback host (no TLS on XEP-0114; `allow_remote`).
    package var allowRemote: Bool
    /// How often the server is pinged to find a dead link (`keepalive`, default 60 s).
    package var keepalive: Duration
    /// The server's own domain, where keepalive pings go and privileges come from
    /// (`server_domain`; default: the component domain's parent, `work.example` for
    /// `home.work.example`).
    package var serverDomain: String
    /// The largest stanza the server takes from the component (bytes, after escaping);
    /// longer deliveries are split into parts (`max_stanza_bytes`, default 64 KiB).
    package var maxStanzaBytes: Int = 65_536
    /// `[[gateway.NAME.user]]`: users linked in the file.
    package var users: [GatewayUser]

    /// The gateway's transport name: its own namespace beside accounts and locals
    /// (`[gateway.home]` may sit beside `[accounts.home]`).
    package var transportName: String { Self.transportName(self.name) }

    package static func transportName(_ name: String) -> String { "gateway.\(name)" }

    /// The default server domain: the component domain's parent.
    package static func parentDomain(of domain: String) -> String {
        guard let dot = domain.firstIndex(of: "."), domain[domain.index(after: dot)...].contains(".") else { return domain }
        return String(domain[domain.index(after: dot)...])
    }

    package static let keys = [
        "component", "host", "port", "secret_file", "secret_env", "name", "registration", "allow", "allow_remote", "keepalive", "server_domain",
        "max_stanza_bytes", "user",
    ]
    package static let userKeys = ["jid", "account"]

    package init(name: String, domain: String, host: String, port: Int, secret: PasswordSource, displayName: String? = nil, registration: RegistrationPolicy, allow: [String], allowRemote: Bool, keepalive: Duration, serverDomain: String, maxStanzaBytes: Int = 65_536, users: [GatewayUser]) {
        self.name = name
        self.domain = domain
        self.host = host
        self.port = port
        self.secret = secret
        self.displayName = displayName
        self.registration = registration
        self.allow = allow
        self.allowRemote = allowRemote
        self.keepalive = keepalive
        self.serverDomain = serverDomain
        self.maxStanzaBytes = maxStanzaBytes
        self.users = users
    }
}
