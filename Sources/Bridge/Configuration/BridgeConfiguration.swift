import AccountTransport
import BridgeFeatures
import BridgeRelay
import BridgeRouting
import Foundation
import HTTPIngress
import TransportCore

/// All of `bridge.toml`: the bridge's own settings, XMPP accounts, local transports and
/// channels.
package struct BridgeConfiguration: Sendable {
    package var file: String
    package var settings: BridgeSettings
    package var accounts: [String: AccountConfiguration]
    package var locals: [String: LocalConfiguration]
    /// Sorted by name: TOMLKit keeps tables as sorted maps, so the file's order is not known.
    package var channels: [RelayChannel]
    /// Channels that relay presence (`presence = true`; default for 1:1 account links).
    package var presenceChannels: Set<String> = []
    /// `[[presence_mirror]]`: account `to` follows the user's other clients on `from`.
    package var presenceMirrors: [PresenceMirrorConfiguration] = []
    /// `[[roster_mirror]]`.
    package var rosterMirrors: [RosterMirrorConfiguration] = []
    /// Channel → its webhook template's text (`template_file`, checked when loaded).
    package var webhookTemplates: [String: String] = [:]
    /// `[gateway.NAME]`: XMPP components whose puppets stand for linked accounts' contacts.
    package var gateways: [String: GatewayConfiguration] = [:]
    /// Each channel's paging settings (issue 24), by channel name.
    package var paging: [String: PagingPolicy] = [:]
    /// Each channel's filters (issue 25), by channel name; channels without are absent.
    package var filters: [String: ChannelFilter] = [:]
    /// Each OMEMO account's contacts' `encryption` (issue 41): by account, then bare JID.
    package var encryption: [String: [String: ContactEncryption]] = [:]

    package init(file: String, settings: BridgeSettings, accounts: [String: AccountConfiguration], locals: [String: LocalConfiguration], channels: [RelayChannel], presenceChannels: Set<String> = [], presenceMirrors: [PresenceMirrorConfiguration] = [], rosterMirrors: [RosterMirrorConfiguration] = [], webhookTemplates: [String: String] = [:], gateways: [String: GatewayConfiguration] = [:], paging: [String: PagingPolicy] = [:], filters: [String: ChannelFilter] = [:], encryption: [String: [String: ContactEncryption]] = [:]) {
        self.encryption = encryption
        self.file = file
        self.settings = settings
        self.accounts = accounts
        self.locals = locals
        self.channels = channels
        self.presenceChannels = presenceChannels
        self.presenceMirrors = presenceMirrors
        self.rosterMirrors = rosterMirrors
        self.webhookTemplates = webhookTemplates
        self.gateways = gateways
        self.paging = paging
        self.filters = filters
    }
}


/// The `[bridge]` table.
package struct BridgeSettings: Sendable, Equatable {
    /// SQLite state file (default: `bridge.sqlite` beside the configuration file); with a
    /// PostgreSQL state, the base of the local files (stream ledgers) only.
    package var statePath: String
    /// The state in PostgreSQL instead (issue 26): `state = "postgresql://…"`, a libpq URL.
    package var stateURL: String?
    /// The PostgreSQL role's password (`state_password_file` or `state_password_env`), when
    /// the URL and `~/.pgpass` do not give it.
    package var statePassword: PasswordSource?
    /// This instance's name among several on one PostgreSQL state (issue 26): the owner
    /// named in its leases and heartbeat. Default: the host name.
    package var instance: String = ProcessInfo.processInfo.hostName
    /// How long an owner may be silent before another instance takes its leases over.
    package var leaseTTL: Duration = .seconds(10)
    /// Control socket for `xmpp-bridge route` (default: `bridge.control` beside the configuration file).
    package var controlSocketPath: String
    /// Names this bridge in the relay marker of every message it sends (default "xmpp-bridge").
    package var bridgeID: String
    /// Deliveries handed to a transport at once.
    package var deliveryBatchSize: Int
    /// At most one presence update per account per this many milliseconds (flapping contacts).
    package var presenceIntervalMilliseconds: Int = 1000
    /// Attempts before a delivery becomes a dead letter.
    package var maxAttempts: Int = 10
    /// The wait after a delivery's first failed attempt, doubling up to `retryMaxMilliseconds`.
    package var retryInitialMilliseconds: Int = 1_000
    package var retryMaxMilliseconds: Int = 300_000
    /// Per-transport queue limits; beyond them intake waits (backpressure), nothing is dropped.
    package var maxQueueRows: Int = 100_000
    package var maxQueueBytes: Int = 64 << 20
    /// A delivery batch not taken within this time counts as a failed attempt, and the
    /// connection is dropped and made anew.
    package var deliveryTimeoutMilliseconds: Int = 30_000
    /// Events an XMPP session holds for the bridge before it stops reading its socket.
    package var eventBuffer: Int = 256
    /// Accounts that connect and log in at the same time, per server; the others wait their turn.
    package var maxConcurrentLogins: Int = 64
    /// Where `/metrics` (Prometheus text) and `/health/live`, `/health/ready` are served; nil: off.
    package var metricsListen: HTTPListenAddress?

    package static let keys = [
        "state", "state_password_file", "state_password_env", "instance", "lease_ttl", "control_socket", "bridge_id", "delivery_batch_size", "presence_interval_ms", "max_attempts", "retry_initial_ms",
        "retry_max_ms", "max_queue_rows", "max_queue_bytes", "delivery_timeout_ms", "event_buffer", "max_concurrent_logins",
        "metrics_listen",
    ]

    package init(statePath: String, stateURL: String? = nil, statePassword: PasswordSource? = nil, instance: String = ProcessInfo.processInfo.hostName, leaseTTL: Duration = .seconds(10), controlSocketPath: String, bridgeID: String, deliveryBatchSize: Int, presenceIntervalMilliseconds: Int = 1000, maxAttempts: Int = 10, retryInitialMilliseconds: Int = 1_000, retryMaxMilliseconds: Int = 300_000, maxQueueRows: Int = 100_000, maxQueueBytes: Int = 64 << 20, deliveryTimeoutMilliseconds: Int = 30_000, eventBuffer: Int = 256, maxConcurrentLogins: Int = 64, metricsListen: HTTPListenAddress? = nil) {
        self.statePath = statePath
        self.stateURL = stateURL
        self.statePassword = statePassword
        self.instance = instance
        self.leaseTTL = leaseTTL
        self.controlSocketPath = controlSocketPath
        self.bridgeID = bridgeID
        self.deliveryBatchSize = deliveryBatchSize
        self.presenceIntervalMilliseconds = presenceIntervalMilliseconds
        self.maxAttempts = maxAttempts
        self.retryInitialMilliseconds = retryInitialMilliseconds
        self.retryMaxMilliseconds = retryMaxMilliseconds
        self.maxQueueRows = maxQueueRows
        self.maxQueueBytes = maxQueueBytes
        self.deliveryTimeoutMilliseconds = deliveryTimeoutMilliseconds
        self.eventBuffer = eventBuffer
        self.maxConcurrentLogins = maxConcurrentLogins
        self.metricsListen = metricsListen
    }
}

/// One `[local.NAME]` table: a local transport.
package struct LocalConfiguration: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
        case stdio
        case fifo
        case socket
        /// HTTP ingress (curl, Alertmanager, Grafana): see ``HTTPLocalSettings``.
        case http
    }

    package var name: String
    package var kind: Kind
    /// FIFO or socket path (required for those kinds).
    package var path: String?
    /// File mode for the FIFO or socket (default 0600).
    package var mode: UInt32
    /// stdio output: "text" (`{sender}: {body}`) or "json".
    package var output: String
    package var maxLineBytes: Int
    package var invalidUTF8: String
    /// The name messages from this input carry.
    package var nick: String
    /// stdio: when standard input ends, finish queued deliveries and exit (default true).
    package var exitOnEndOfInput: Bool
    /// Set for kind http.
    package var http: HTTPLocalSettings?

    package static let keys = ["kind", "path", "mode", "output", "max_line_bytes", "invalid_utf8", "nick", "exit_on_eof"] + HTTPLocalSettings.keys

    package init(name: String, kind: Kind, path: String? = nil, mode: UInt32, output: String, maxLineBytes: Int, invalidUTF8: String, nick: String, exitOnEndOfInput: Bool, http: HTTPLocalSettings? = nil) {
        self.name = name
        self.kind = kind
        self.path = path
        self.mode = mode
        self.output = output
        self.maxLineBytes = maxLineBytes
        self.invalidUTF8 = invalidUTF8
        self.nick = nick
        self.exitOnEndOfInput = exitOnEndOfInput
        self.http = http
    }
}

/// The settings of an HTTP ingress local (`kind = "http"`).
package struct HTTPLocalSettings: Sendable, Equatable, CustomStringConvertible {
    package var listen: HTTPListenAddress
    /// Where the bearer token comes from; nil: no token (loopback or Unix socket only).
    package var token: PasswordSource?
    package var maxBodyBytes: Int = 1 << 20
    package var waitTimeout: Duration = .seconds(30)
    package var maxConnections: Int = 256
    package var idleTimeout: Duration = .seconds(30)

    package static let keys = ["listen", "token_file", "token_env", "max_body_bytes", "wait_timeout", "max_connections", "idle_timeout"]

    /// Names the token's source, never the token.
    package var description: String {
        "listen \(self.listen), token \(self.token.map { "\($0)" } ?? "none"), max_body_bytes \(self.maxBodyBytes), wait_timeout \(self.waitTimeout), max_connections \(self.maxConnections), idle_timeout \(self.idleTimeout)"
    }

    package init(listen: HTTPListenAddress, token: PasswordSource? = nil, maxBodyBytes: Int = 1 << 20, waitTimeout: Duration = .seconds(30), maxConnections: Int = 256, idleTimeout: Duration = .seconds(30)) {
        self.listen = listen
        self.token = token
        self.maxBodyBytes = maxBodyBytes
        self.waitTimeout = waitTimeout
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
    }
}
