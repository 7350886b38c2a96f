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

    /// The XEP-0440 channel-binding type it needs; nil for NONE.
    public var channelBindingType: String? {
        switch self {
        case .tlsExporter: "tls-exporter"
        case .tlsServerEndPoint: "tls-server-end-point"
        case .none: nil
        }
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
