/// A TLS failure, with the OpenSSL error stack and, for certificate problems, the
/// verification result (RFC 6120 §5.4.3.1, §13.7.2; RFC 7590).
public struct TLSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in our terms.
    public enum Kind: Hashable, Sendable {
        /// The TLS context could not be set up (bad CA file, key, …).
        case configuration
        /// The handshake failed; `certificateVerification` says why when it was the certificate.
        case handshakeFailed
        /// The peer's certificate was rejected (untrusted chain, wrong name, expired, …).
        case certificateRejected
        /// Reading or writing application data failed.
        case ioFailed
        /// Plaintext arrived after `<proceed/>` and before the handshake (RFC 6120 §5.4.3.3).
        case unencryptedDataAfterProceed
        /// The peer closed the TLS session.
        case closedByPeer
    }

    public var kind: Kind
    /// Entries of OpenSSL's error queue, oldest first (`ERR_error_string_n` form).
    public var openSSLErrors: [String]
    /// OpenSSL's verdict on the peer certificate, when verification failed.
    public var certificateVerification: String?

    public init(_ kind: Kind, openSSLErrors: [String] = [], certificateVerification: String? = nil) {
        self.kind = kind
        self.openSSLErrors = openSSLErrors
        self.certificateVerification = certificateVerification
    }

    public var description: String {
        var text = "TLS \(self.kind)"
        if let certificateVerification { text += ": certificate \(certificateVerification)" }
        if !self.openSSLErrors.isEmpty { text += " [" + self.openSSLErrors.joined(separator: "; ") + "]" }
        return text
    }
}
