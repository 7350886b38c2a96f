import OMEMO
import OMEMOState

/// What `xmpp-bridge omemo fingerprints ACCOUNT` shows (issue 41): the account's own device
/// and fingerprint, then each device it knows of its contacts (and its own other devices)
/// with fingerprint and trust; keys decided by hand before any device showed them too.
package struct OMEMOListing: Codable, Sendable, Equatable {
    package struct Device: Codable, Sendable, Equatable {
        package var jid: String
        /// Nil for a key decided by hand that no device has shown yet.
        package var device: UInt32?
        /// Grouped as clients show it; nil until the device's key is known (its bundle or a message).
        package var fingerprint: String?
        /// blind, verified, undecided, distrusted; nil until its key is known.
        package var trust: String?
    }

    package var account: String
    package var device: UInt32
    package var fingerprint: String
    package var devices: [Device]

    /// The listing of `state`, the account whose bare JID is `jid`.
    package init(account: String, jid: String, state: OMEMOAccountState) {
        self.account = account
        self.device = state.keys.deviceID
        self.fingerprint = OMEMOFingerprint(publicKey: state.keys.identityPublicKey).map { "\($0)" } ?? "-"
        var devices: [Device] = []
        var shown: Set<[UInt8]> = []
        for (contact, list) in state.deviceLists.sorted(by: { $0.key < $1.key }) {
            for device in list where !(contact == jid && device == state.keys.deviceID) {
                let key = state.keys.identities[OMEMOAddress(jid: contact, device: device)]
                if let key { shown.insert(key) }
                devices.append(
                    Device(
                        jid: contact, device: device, fingerprint: key.flatMap(OMEMOFingerprint.init(publicKey:)).map { "\($0)" },
                        trust: key.flatMap { state.trust[contact]?[$0]?.rawValue }
                    )
                )
            }
        }
        for (contact, levels) in state.trust.sorted(by: { $0.key < $1.key }) {
            for (key, level) in levels.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) where !shown.contains(key) {
                devices.append(Device(jid: contact, device: nil, fingerprint: OMEMOFingerprint(publicKey: key).map { "\($0)" }, trust: level.rawValue))
            }
        }
        self.devices = devices
    }
}
