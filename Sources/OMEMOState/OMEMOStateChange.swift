/// One change to an account's OMEMO state (issue 41), as the journal commits it: before the
/// message it concerns goes on, so a kill -9 never loses a key a sent message used.
public enum OMEMOStateChange: Hashable, Sendable {
    /// The account became an OMEMO device: its keys as made.
    case created(OMEMOKeys)
    /// Its keys changed (sessions moved on, prekeys used or made).
    case keys(OMEMOKeyChanges)
    /// A contact's identity key (serialized) got this trust.
    case trust(jid: String, identityKey: [UInt8], OMEMOTrustLevel)
    /// A contact's (or the account's own) device list as last published.
    case deviceList(jid: String, devices: [UInt32])
}
