/// SCRAM downgrade protection (XEP-0474 §3, SSDP): a server that supports it puts `h=` in
/// its server-first-message, a hash of the mechanisms and channel-binding types it
/// advertised. The client recomputes the hash from exactly the lists it received and
/// refuses a mismatch: something between the two removed an offer (a -PLUS mechanism, a
/// channel-binding type) to make the client settle for less. The hash is inside SCRAM's
/// AuthMessage, so an `h` stripped on the way makes the server refuse the proof; `h` is
/// required only where the client chose less than the server may offer (``required``).
public struct DowngradeProtection: Hashable, Sendable {
    /// The SASL mechanisms as advertised in the profile in use (RFC 6120's `<mechanisms>`
    /// or XEP-0388's `<authentication>`), in any order.
    public var mechanisms: [String]
    /// The channel-binding types of XEP-0440's `<sasl-channel-binding>`; nil when the
    /// server announced none (then they take no part in the hash).
    public var channelBindingTypes: [String]?
    /// The server-first-message must carry `h`: the client sends `n` only because none of
    /// the announced channel-binding types is one it supports (XEP-0474 §4).
    public var required: Bool

    public init(mechanisms: [String], channelBindingTypes: [String]?, required: Bool = false) {
        self.mechanisms = mechanisms
        self.channelBindingTypes = channelBindingTypes
        self.required = required
    }

    /// What is hashed (XEP-0474 §3): the mechanisms sorted by octet and joined by U+001E;
    /// with channel-binding types, U+001F and the types sorted and joined the same way.
    public var hashInput: [UInt8] {
        var input = Self.joined(self.mechanisms)
        if let types = self.channelBindingTypes {
            input.append(0x1F)
            input += Self.joined(types)
        }
        return input
    }

    /// The `h` a server advertising these lists sends, with the SCRAM mechanism's hash.
    public func expectedHash(_ algorithm: HashAlgorithm) -> [UInt8] {
        OpenSSLCrypto.digest(algorithm, self.hashInput)
    }

    /// Checks the server-first-message's `h` value (base64; nil when absent).
    public func verify(_ value: String?, algorithm: HashAlgorithm) throws(SASLError) {
        guard let value else {
            if self.required { throw SASLError.downgradeProtectionMissing }
            return
        }
        let received = try SASLBase64.decode(value)
        guard OpenSSLCrypto.constantTimeEquals(received, self.expectedHash(algorithm)) else {
            throw SASLError.downgradeDetected
        }
    }

    private static func joined(_ names: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        for (index, name) in names.map({ Array($0.utf8) }).sorted(by: { $0.lexicographicallyPrecedes($1) }).enumerated() {
            if index > 0 { bytes.append(0x1E) }
            bytes += name
        }
        return bytes
    }
}
