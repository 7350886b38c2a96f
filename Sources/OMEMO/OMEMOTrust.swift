import OMEMOState

/// Whom an account's OMEMO device trusts (XEP-0384 v0.3 §7), by contact and identity key:
/// the `omemo_trust` policy, and the decisions made by hand. Pure: each change it makes is
/// returned for the journal.
///
/// - `blind` (default): a contact's new key is trusted ("blind trust before verification")
///   until one of that contact's keys is verified; from then on a new key waits for a
///   decision. Keys trusted blindly before stay trusted.
/// - `manual`: only keys verified by hand.
public struct OMEMOTrust: Hashable, Sendable {
    public enum Policy: String, Hashable, Sendable, CaseIterable {
        case blind
        case manual
    }

    public var policy: Policy
    /// By bare JID, then identity key (serialized).
    public private(set) var levels: [String: [[UInt8]: OMEMOTrustLevel]]

    public init(policy: Policy, levels: [String: [[UInt8]: OMEMOTrustLevel]] = [:]) {
        self.policy = policy
        self.levels = levels
    }

    /// The decision on `key` of `jid`; nil when it was never seen.
    public func level(of key: [UInt8], for jid: String) -> OMEMOTrustLevel? {
        self.levels[jid]?[key]
    }

    /// Whether messages go to `key` of `jid` and its messages are relayed (a key never
    /// seen is not trusted: ``observe(_:for:)`` decides first).
    public func trusts(_ key: [UInt8], for jid: String) -> Bool {
        self.level(of: key, for: jid)?.isTrusted ?? false
    }

    /// `key` of `jid` is seen (in a bundle, or a message): a new key gets the policy's
    /// level, which is returned as a change; a known key keeps its own.
    public mutating func observe(_ key: [UInt8], for jid: String) -> OMEMOStateChange? {
        guard self.levels[jid]?[key] == nil else { return nil }
        let anyVerified = self.levels[jid]?.values.contains(.verified) ?? false
        let level: OMEMOTrustLevel = self.policy == .blind && !anyVerified ? .blind : .undecided
        return self.set(level, key, for: jid)
    }

    /// A decision by hand: `verified` or `distrusted` (also for a key not seen yet, known
    /// by its fingerprint). Nil when it changes nothing.
    public mutating func decide(_ level: OMEMOTrustLevel, _ key: [UInt8], for jid: String) -> OMEMOStateChange? {
        guard self.levels[jid]?[key] != level else { return nil }
        return self.set(level, key, for: jid)
    }

    private mutating func set(_ level: OMEMOTrustLevel, _ key: [UInt8], for jid: String) -> OMEMOStateChange {
        self.levels[jid, default: [:]][key] = level
        return .trust(jid: jid, identityKey: key, level)
    }
}
