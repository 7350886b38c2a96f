import Foundation
import HTTPIngress
import TransportCore

/// All of `bridge.toml`: the bridge's own settings, XMPP accounts, local transports and
/// channels.
struct BridgeConfiguration: Sendable {
    var file: String
    var settings: BridgeSettings
    var accounts: [String: AccountConfiguration]
    var locals: [String: LocalConfiguration]
    /// Sorted by name: TOMLKit keeps tables as sorted maps, so the file's order is not known.
    var channels: [RelayChannel]
    /// Channels that relay presence (`presence = true`; default for 1:1 account links).
    var presenceChannels: Set<String> = []
    /// `[[presence_mirror]]`: account `to` follows the user's other clients on `from`.
    var presenceMirrors: [PresenceMirrorConfiguration] = []
    /// `[[roster_mirror]]`.
    var rosterMirrors: [RosterMirrorConfiguration] = []
    /// Channel → its webhook template's text (`template_file`, checked when loaded).
    var webhookTemplates: [String: String] = [:]
    /// `[gateway.NAME]`: XMPP components whose puppets stand for linked accounts' contacts.
    var gateways: [String: GatewayConfiguration] = [:]
    /// Each channel's paging settings (issue 24), by channel name.
    var paging: [String: PagingPolicy] = [:]
    /// Each channel's filters (issue 25), by channel name; channels without are absent.
    var filters: [String: ChannelFilter] = [:]
}

/// One `[[presence_mirror]]` entry: account `to` shows what the user's other clients on
/// account `from` show.
struct PresenceMirrorConfiguration: Sendable, Equatable {
    var from: String
    var to: String

    static let keys = ["from", "to"]
}

/// One `[[roster_mirror]]` entry: contacts of account `from` appear in account `to`'s
/// roster (and back, when two-way), optionally only some groups.
struct RosterMirrorConfiguration: Sendable, Equatable {
    var from: String
    var to: String
    /// Only items in at least one of these groups; nil mirrors everything.
    var groups: Set<String>?
    var twoWay: Bool
    /// Also ask mirrored contacts for their presence (subscription request) from `to`.
    var subscribe: Bool

    /// Stable id for the mirror's stored snapshots.
    var id: String { "\(self.from)->\(self.to)" }

    static let keys = ["from", "to", "groups", "two_way", "subscribe"]
}

/// The `[bridge]` table.
struct BridgeSettings: Sendable, Equatable {
    /// SQLite state file (default: `bridge.sqlite` beside the configuration file); with a
    /// PostgreSQL state, the base of the local files (stream ledgers) only.
    var statePath: String
    /// The state in PostgreSQL instead (issue 26): `state = "postgresql://…"`, a libpq URL.
    var stateURL: String?
    /// The PostgreSQL role's password (`state_password_file` or `state_password_env`), when
    /// the URL and `~/.pgpass` do not give it.
    var statePassword: PasswordSource?
    /// This instance's name among several on one PostgreSQL state (issue 26): the owner
    /// named in its leases and heartbeat. Default: the host name.
    var instance: String = ProcessInfo.processInfo.hostName
    /// How long an owner may be silent before another instance takes its leases over.
    var leaseTTL: Duration = .seconds(10)
    /// Control socket for `xmpp-bridge route` (default: `bridge.control` beside the configuration file).
    var controlSocketPath: String
    /// Names this bridge in the relay marker of every message it sends (default "xmpp-bridge").
    var bridgeID: String
    /// Deliveries handed to a transport at once.
    var deliveryBatchSize: Int
    /// At most one presence update per account per this many milliseconds (flapping contacts).
    var presenceIntervalMilliseconds: Int = 1000
    /// Attempts before a delivery becomes a dead letter.
    var maxAttempts: Int = 10
    /// The wait after a delivery's first failed attempt, doubling up to `retryMaxMilliseconds`.
    var retryInitialMilliseconds: Int = 1_000
    var retryMaxMilliseconds: Int = 300_000
    /// Per-transport queue limits; beyond them intake waits (backpressure), nothing is dropped.
    var maxQueueRows: Int = 100_000
    var maxQueueBytes: Int = 64 << 20
    /// A delivery batch not taken within this time counts as a failed attempt, and the
    /// connection is dropped and made anew.
    var deliveryTimeoutMilliseconds: Int = 30_000
    /// Events an XMPP session holds for the bridge before it stops reading its socket.
    var eventBuffer: Int = 256
    /// Accounts that connect and log in at the same time, per server; the others wait their turn.
    var maxConcurrentLogins: Int = 64
    /// Where `/metrics` (Prometheus text) and `/health/live`, `/health/ready` are served; nil: off.
    var metricsListen: HTTPListenAddress?

    static let keys = [
        "state", "state_password_file", "state_password_env", "instance", "lease_ttl", "control_socket", "bridge_id", "delivery_batch_size", "presence_interval_ms", "max_attempts", "retry_initial_ms",
        "retry_max_ms", "max_queue_rows", "max_queue_bytes", "delivery_timeout_ms", "event_buffer", "max_concurrent_logins",
        "metrics_listen",
    ]
}

/// One `[local.NAME]` table: a local transport.
struct LocalConfiguration: Sendable, Equatable {
    enum Kind: String, Sendable, CaseIterable {
        case stdio
        case fifo
        case socket
        /// HTTP ingress (curl, Alertmanager, Grafana): see ``HTTPLocalSettings``.
        case http
    }

    var name: String
    var kind: Kind
    /// FIFO or socket path (required for those kinds).
    var path: String?
    /// File mode for the FIFO or socket (default 0600).
    var mode: UInt32
    /// stdio output: "text" (`{sender}: {body}`) or "json".
    var output: String
    var maxLineBytes: Int
    var invalidUTF8: String
    /// The name messages from this input carry.
    var nick: String
    /// stdio: when standard input ends, finish queued deliveries and exit (default true).
    var exitOnEndOfInput: Bool
    /// Set for kind http.
    var http: HTTPLocalSettings?

    static let keys = ["kind", "path", "mode", "output", "max_line_bytes", "invalid_utf8", "nick", "exit_on_eof"] + HTTPLocalSettings.keys
}

/// The settings of an HTTP ingress local (`kind = "http"`).
struct HTTPLocalSettings: Sendable, Equatable, CustomStringConvertible {
    var listen: HTTPListenAddress
    /// Where the bearer token comes from; nil: no token (loopback or Unix socket only).
    var token: PasswordSource?
    var maxBodyBytes: Int = 1 << 20
    var waitTimeout: Duration = .seconds(30)
    var maxConnections: Int = 256
    var idleTimeout: Duration = .seconds(30)

    static let keys = ["listen", "token_file", "token_env", "max_body_bytes", "wait_timeout", "max_connections", "idle_timeout"]

    /// Names the token's source, never the token.
    var description: String {
        "listen \(self.listen), token \(self.token.map { "\($0)" } ?? "none"), max_body_bytes \(self.maxBodyBytes), wait_timeout \(self.waitTimeout), max_connections \(self.maxConnections), idle_timeout \(self.idleTimeout)"
    }
}
