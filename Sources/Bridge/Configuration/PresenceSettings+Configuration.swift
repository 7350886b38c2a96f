import BridgeFeatures

extension PresenceSettings {
    /// The presence settings of a loaded `bridge.toml`.
    package init(_ configuration: BridgeConfiguration) {
        self.init(
            accounts: Set(configuration.accounts.keys),
            ownJIDs: Set(configuration.accounts.values.map { $0.client.jid.bare.description.lowercased() }),
            presenceChannels: configuration.presenceChannels, mirrors: configuration.presenceMirrors,
            interval: .milliseconds(configuration.settings.presenceIntervalMilliseconds)
        )
    }
}
