/// An OMEMO device's fingerprint as clients show it (XEP-0384 v0.3; Conversations, Dino,
/// Gajim): the identity key's Curve25519 form, 32 bytes, as 64 lower-case hex characters,
/// without the serialized key's leading 0x05, shown in groups of 8. Read from what a user
/// types: spaces, colons, upper case and a leading `05` are accepted.
public struct OMEMOFingerprint: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes of the Curve25519 public key.
    public let key: [UInt8]

    /// From a serialized public key: 0x05 and 32 bytes, or the 32 bytes alone.
    public init?(publicKey: [UInt8]) {
        switch publicKey.count {
        case 33 where publicKey[0] == 0x05: self.key = Array(publicKey.dropFirst())
        case 32: self.key = publicKey
        default: return nil
        }
    }

    /// From text a user typed or pasted; nil unless it is 64 hex digits (66 with a leading
    /// `05`) once spaces and colons are taken out.
    public init?(parsing text: String) {
        let digits = text.lowercased().filter { !$0.isWhitespace && $0 != ":" }
        let hex = digits.count == 66 && digits.hasPrefix("05") ? String(digits.dropFirst(2)) : digits
        guard hex.count == 64, let bytes = Hex.bytes(hex) else { return nil }
        self.key = bytes
    }

    /// 64 hex characters, no separators (for `--json` and the state).
    public var hex: String {
        Hex.string(self.key)
    }

    /// As clients show it: eight groups of eight hex characters.
    public var description: String {
        var groups: [Substring] = []
        var rest = Substring(self.hex)
        while !rest.isEmpty {
            groups.append(rest.prefix(8))
            rest = rest.dropFirst(8)
        }
        return groups.joined(separator: " ")
    }
}
