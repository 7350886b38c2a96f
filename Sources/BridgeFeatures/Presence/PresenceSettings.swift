/// What presence relaying is configured with (RFC 6121 §4; `[presence]` channels and
/// `[[presence_mirror]]`): the bridge's accounts and their own JIDs, the channels that
/// relay presence, the mirrors, and how often a contact's changes are coalesced.
package struct PresenceSettings: Sendable {
    package var accounts: Set<String>
    /// The accounts' bare JIDs, lower-cased: their own presences are never relayed back.
    package var ownJIDs: Set<String>
    package var presenceChannels: Set<String>
    package var mirrors: [PresenceMirrorConfiguration]
    package var interval: Duration

    package init(accounts: Set<String>, ownJIDs: Set<String>, presenceChannels: Set<String>, mirrors: [PresenceMirrorConfiguration], interval: Duration) {
        self.accounts = accounts
        self.ownJIDs = ownJIDs
        self.presenceChannels = presenceChannels
        self.mirrors = mirrors
        self.interval = interval
    }
}
