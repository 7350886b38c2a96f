import NIOConcurrencyHelpers
import OMEMO

/// An account that is an OMEMO device (XEP-0384 v0.3; issue 41, `omemo = true`): its trust
/// policy (§7), where its state is kept, and how messages to each contact go.
public struct OMEMOSettings: Sendable {
    /// `omemo_trust`.
    public var trust: OMEMOTrust.Policy
    public var keeper: OMEMOStateKeeper
    /// Each contact's `encryption` (by bare JID; the strictest of its memberships);
    /// a contact not listed gets `omemo`.
    public var encryption: [String: ContactEncryption]

    public init(trust: OMEMOTrust.Policy = .blind, keeper: OMEMOStateKeeper, encryption: [String: ContactEncryption] = [:]) {
        self.trust = trust
        self.keeper = keeper
        self.encryption = encryption
    }
}
