/// How far a contact's identity key is trusted (XEP-0384 v0.3 §7; the policy is "blind
/// trust before verification", XEP-0450's precursor as Conversations and Dino apply it).
public enum OMEMOTrustLevel: String, Hashable, Sendable, CaseIterable {
    /// Trusted without verification: a new key of a contact none of whose keys is verified.
    case blind
    /// Verified by hand (`omemo trust`): trusted.
    case verified
    /// Not decided: a new key under `omemo_trust = "manual"`, or once another key of the
    /// contact is verified. Not encrypted to; its messages are not relayed.
    case undecided
    /// Refused by hand (`omemo distrust`).
    case distrusted

    /// Whether messages are encrypted to it and its messages relayed.
    public var isTrusted: Bool { self == .blind || self == .verified }
}
