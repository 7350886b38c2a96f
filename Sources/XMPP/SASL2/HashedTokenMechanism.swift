/// A FAST login's SASL mechanism (XEP-0484 §3.4): HT-SHA-256 with a channel binding
/// (draft-schmaus-kitten-sasl-ht §2–§3). The client proves it holds the token with
/// `HMAC(token, "Initiator" ‖ channel-binding data)` after its authentication identity and
/// a NUL; the server proves it in `<success>`'s additional data with
/// `HMAC(token, "Responder" ‖ channel-binding data)`, which the client checks. The
/// channel binding ties the token's use to this TLS connection: EXPR (tls-exporter),
/// ENDP (tls-server-end-point), or NONE.
public enum HashedTokenMechanism: String, Hashable, Sendable, CaseIterable {
    case tlsExporter = "HT-SHA-256-EXPR"
    case tlsServerEndPoint = "HT-SHA-256-ENDP"
    case none = "HT-SHA-256-NONE"

    /// The channel-binding type it needs; nil for NONE.
    public var channelBindingType: ChannelBindingChoice.ChannelBindingType? {
        switch self {
        case .tlsExporter: .tlsExporter
        case .tlsServerEndPoint: .tlsServerEndPoint
        case .none: nil
        }
    }

    /// The channel-binding data it proves with on this connection: empty for NONE, nil
    /// when the connection has none of its type.
    public func channelBindingData(_ data: ChannelBindingData) -> [UInt8]? {
        guard let type = self.channelBindingType else { return [] }
        return data.data(for: type)
    }

    /// Whether a login may use it here: the server offers it, the connection has its
    /// data, and a bound one's type is among those XEP-0440 announced (ejabberd offers
    /// all four whatever the connection can do; an unannounced type fails the login).
    public func isUsable(offered: [String], announcedTypes: [String]?, data: ChannelBindingData) -> Bool {
        guard offered.contains(self.rawValue), self.channelBindingData(data) != nil else { return false }
        guard let type = self.channelBindingType else { return true }
        return announcedTypes?.contains(type.rawValue) == true
    }

    /// The strongest one usable here, to ask a token for (XEP-0484 §3.2).
    public static func strongest(offered: [String], announcedTypes: [String]?, data: ChannelBindingData) -> HashedTokenMechanism? {
        Self.allCases.first { $0.isUsable(offered: offered, announcedTypes: announcedTypes, data: data) }
    }

    /// The initial response: `authcid NUL HMAC-SHA-256(token, "Initiator" ‖ cb-data)`.
    /// `username` is the account's localpart; `token` the secret exactly as the server
    /// gave it.
    public static func initialResponse(username: String, token: String, channelBinding: [UInt8]) -> [UInt8] {
        Array(username.utf8) + [0] + OpenSSLCrypto.hmac(.sha256, key: Array(token.utf8), data: Array("Initiator".utf8) + channelBinding)
    }

    /// Whether `additionalData` of `<success>` is the server's proof for `token` on this
    /// connection (constant time). A success without it has not proven the server knows
    /// the token.
    public static func verifyResponder(_ additionalData: [UInt8]?, token: String, channelBinding: [UInt8]) -> Bool {
        guard let additionalData else { return false }
        let expected = OpenSSLCrypto.hmac(.sha256, key: Array(token.utf8), data: Array("Responder".utf8) + channelBinding)
        return OpenSSLCrypto.constantTimeEquals(additionalData, expected)
    }
}
