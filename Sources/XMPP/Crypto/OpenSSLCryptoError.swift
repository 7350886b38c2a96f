/// A failure of the system OpenSSL that is not caused by invalid arguments.
public enum OpenSSLCryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `RAND_bytes` reported failure: the random generator is unusable.
    case randomGenerationFailed

    public var description: String {
        switch self {
        case .randomGenerationFailed: "OpenSSL RAND_bytes failed: no secure random bytes available"
        }
    }
}
