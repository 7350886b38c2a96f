import TOMLKit

extension ConfigurationLoader {
    /// The `[bridge]` table, with defaults for whatever it leaves out (or when it is absent).
    mutating func settings(_ value: TOMLValue?) -> BridgeSettings {
        var settings = BridgeSettings(
            statePath: self.resolve("bridge.sqlite"), controlSocketPath: self.resolve("bridge.control"),
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
            settings.statePath = self.resolve(state)
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
        return settings
    }
}
