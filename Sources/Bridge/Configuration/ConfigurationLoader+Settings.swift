import BridgeRelay
import Foundation
import TOMLKit

extension ConfigurationLoader {
    /// The `[bridge]` table, with defaults for whatever it leaves out (or when it is absent).
    package mutating func settings(_ value: TOMLValue?) -> BridgeSettings {
        // Under systemd (StateDirectory=, RuntimeDirectory=) the defaults move there.
        let stateDirectory = self.environment["STATE_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
        let runtimeDirectory = self.environment["RUNTIME_DIRECTORY"].flatMap { $0.split(separator: ":").first.map(String.init) }
        var settings = BridgeSettings(
            statePath: stateDirectory.map { "\($0)/bridge.sqlite" } ?? self.resolve("bridge.sqlite"),
            controlSocketPath: runtimeDirectory.map { "\($0)/bridge.control" } ?? self.resolve("bridge.control"),
            bridgeID: "xmpp-bridge", deliveryBatchSize: 100
        )
        guard let value else { return settings }
        let path = "bridge"
        guard let table = value.table else {
            self.problem(path, "must be a table", "write a [bridge] section")
            return settings
        }
        self.rejectUnknownKeys(in: table, at: path, allowed: BridgeSettings.keys)
        if let state = self.nonEmptyString(table, "state", path, hint: "the SQLite state file, e.g. state = \"bridge.sqlite\"") {
            if state.hasPrefix("postgresql://") || state.hasPrefix("postgres://") {
                settings.stateURL = state
                // This host's own files (stream ledgers, the instance lock) keep a name of
                // their own, apart from any SQLite state beside them.
                settings.statePath = stateDirectory.map { "\($0)/bridge.local" } ?? self.resolve("bridge.local")
            } else {
                settings.statePath = self.resolve(state)
            }
        }
        var passwords: [PasswordSource] = []
        if let file = self.nonEmptyString(table, "state_password_file", path, hint: "a file holding the database password, e.g. \"db.password\"") {
            let resolved = self.resolve(file)
            if !FileManager.default.isReadableFile(atPath: resolved) {
                self.problem("\(path).state_password_file", "cannot read \(resolved)", "create it with the database password, mode 0600")
            }
            passwords.append(.file(resolved))
        }
        if let variable = self.nonEmptyString(table, "state_password_env", path, hint: "an environment variable, e.g. \"BRIDGE_DB_PASSWORD\"") {
            passwords.append(.environment(variable))
        }
        if passwords.count > 1 {
            self.problem(path, "has both state_password_file and state_password_env", "set one of them")
        } else if let source = passwords.first {
            if settings.stateURL == nil {
                self.problem(path, "has a state password but a SQLite state", "a password is for state = \"postgresql://…\"")
            }
            settings.statePassword = source
        }
        if let instance = self.nonEmptyString(table, "instance", path, hint: "this instance's name, unique among those sharing the state, e.g. \"node-a\"") {
            if instance.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
                self.problem("\(path).instance", "must not contain spaces or control characters", "a short name, e.g. instance = \"node-a\"")
            } else {
                settings.instance = instance
            }
        }
        if let ttl = self.age(table, "lease_ttl", path) {
            if ttl < .seconds(3) || ttl > .seconds(600) {
                self.problem("\(path).lease_ttl", "must be from 3s to 10m", "how long an owner may be silent before another instance takes over, e.g. \"10s\"")
            } else {
                settings.leaseTTL = ttl
            }
        }
        if let socket = self.nonEmptyString(table, "control_socket", path, hint: "the control socket path, e.g. control_socket = \"bridge.control\"") {
            settings.controlSocketPath = self.resolve(socket)
            self.checkSocketPath(settings.controlSocketPath, at: "\(path).control_socket")
        }
        if let id = self.nonEmptyString(table, "bridge_id", path, hint: "a short name without spaces, e.g. bridge_id = \"xmpp-bridge\"") {
            if id.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
                self.problem("\(path).bridge_id", "must not contain spaces", "a short name without spaces, e.g. bridge_id = \"xmpp-bridge\"")
            } else {
                settings.bridgeID = id
            }
        }
        if let size = self.integer(table, "delivery_batch_size", path, in: 1...10_000, hint: "deliveries handed to a transport at once, e.g. 100") {
            settings.deliveryBatchSize = size
        }
        if let interval = self.integer(table, "presence_interval_ms", path, in: 0...600_000, hint: "milliseconds between presence updates of one account, e.g. 1000") {
            settings.presenceIntervalMilliseconds = interval
        }
        if let value = self.integer(table, "max_attempts", path, in: 1...1_000, hint: "attempts before a delivery becomes a dead letter, e.g. 10") {
            settings.maxAttempts = value
        }
        if let value = self.integer(table, "retry_initial_ms", path, in: 10...3_600_000, hint: "milliseconds before a failed delivery is tried again, e.g. 1000") {
            settings.retryInitialMilliseconds = value
        }
        if let value = self.integer(table, "retry_max_ms", path, in: 10...86_400_000, hint: "the longest wait between attempts in milliseconds, e.g. 300000") {
            settings.retryMaxMilliseconds = value
        }
        if let value = self.integer(table, "max_queue_rows", path, in: 1...100_000_000, hint: "deliveries one transport may have queued, e.g. 100000") {
            settings.maxQueueRows = value
        }
        if let value = self.integer(table, "max_queue_bytes", path, in: 1_024...68_719_476_736, hint: "bytes one transport may have queued, e.g. 67108864") {
            settings.maxQueueBytes = value
        }
        if let value = self.integer(table, "delivery_timeout_ms", path, in: 100...3_600_000, hint: "milliseconds a delivery batch may take, e.g. 30000") {
            settings.deliveryTimeoutMilliseconds = value
        }
        if let value = self.integer(table, "event_buffer", path, in: 1...1_000_000, hint: "events a session holds before it stops reading, e.g. 256") {
            settings.eventBuffer = value
        }
        if let value = self.integer(table, "max_concurrent_logins", path, in: 1...10_000, hint: "accounts logging in at the same time, e.g. 64") {
            settings.maxConcurrentLogins = value
        }
        settings.metricsListen = self.metricsListen(table, at: path)
        return settings
    }

    /// Batches a worker keeps in flight: a transport that writes one while earlier ones
    /// wait for the server's acknowledgement keeps the link busy; local transports answer
    /// as they write, so for them it changes nothing.
    package static var batchesInFlight: Int { 4 }

    /// The delivery queue settings of `[bridge]`, for `batchSize` deliveries at once.
    package static func queueConfiguration<I: InstantProtocol & Sendable>(_ settings: BridgeSettings) -> DeliveryQueue<I>.Configuration where I.Duration == Duration {
        DeliveryQueue<I>.Configuration(
            batchSize: settings.deliveryBatchSize, batchesInFlight: Self.batchesInFlight, maxAttempts: settings.maxAttempts,
            retryInitialDelay: .milliseconds(settings.retryInitialMilliseconds), retryMaximumDelay: .milliseconds(settings.retryMaxMilliseconds),
            maxRows: settings.maxQueueRows, maxBytes: settings.maxQueueBytes
        )
    }
}
