/// What the state keeps of one account's OMEMO device (issue 41): its keys, the trust in
/// each identity key its contacts presented, and the device lists it follows.
public struct OMEMOAccountState: Hashable, Sendable {
    public var keys: OMEMOKeys
    /// By bare JID, then identity key (serialized).
    public var trust: [String: [[UInt8]: OMEMOTrustLevel]]
    /// By bare JID: the devices it last published.
    public var deviceLists: [String: [UInt32]]

    public init(keys: OMEMOKeys, trust: [String: [[UInt8]: OMEMOTrustLevel]] = [:], deviceLists: [String: [UInt32]] = [:]) {
        self.keys = keys
        self.trust = trust
        self.deviceLists = deviceLists
    }

    /// The state after `changes`, in order; a `.created` replaces everything.
    public mutating func apply(_ changes: [OMEMOStateChange]) {
        for change in changes {
            switch change {
            case .created(let keys): self = OMEMOAccountState(keys: keys)
            case .keys(let keyChanges): self.keys.apply(keyChanges)
            case .trust(let jid, let key, let level): self.trust[jid, default: [:]][key] = level
            case .deviceList(let jid, let devices): self.deviceLists[jid] = devices
            }
        }
    }
}
