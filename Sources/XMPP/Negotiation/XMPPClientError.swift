/// Why a client connection could not be established or ended (RFC 6120 §4.9 stream
/// errors, §5 TLS, §6 SASL, §7 binding), with enough context for a one-line message.
///
/// `indirect`: a pointer wherever it is kept. Async frames hold every value live across a
/// suspension, and a long-lived task keeps its largest frames for life
/// (docs/performance.md); an error is rare, its size is paid in every frame that may hold one.
public indirect enum XMPPClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The configuration cannot work (e.g. plaintext to a non-loopback address).
    case configuration(String)
    /// No address could be found for the domain.
    case resolutionFailed(domain: String, reason: String)
    /// Every connection attempt failed; one entry per `host:port` tried.
    case connectFailed(attempts: [String])
    /// The server offered no STARTTLS while TLS is required: nothing was authenticated
    /// (a stripped STARTTLS looks exactly like this).
    case tlsNotOffered
    /// The server answered `<starttls/>` with `<failure/>`.
    case startTLSRefused
    /// The TLS handshake or session failed (certificate rejected, protocol error, …).
    case tls(TLSError)
    /// Authentication failed for `account`.
    case authenticationFailed(account: String, SASLError)
    /// Resource binding (or the legacy session IQ) was refused.
    case bindFailed(condition: String, text: String?)
    /// In-band registration (XEP-0077) was refused or is not offered.
    case registrationFailed(condition: String, text: String?)
    /// The server sent a stream error.
    case streamError(condition: StreamErrorCondition, text: String?)
    /// The server's XML broke the rules; we sent this stream error and closed.
    case invalidServerXML(XMLStreamError)
    /// The server sent something negotiation did not expect.
    case unexpectedElement(String)
    /// The server closed the connection (before negotiation finished, or without ending
    /// the stream).
    case closedByServer
    /// The server ended an established stream itself (`</stream:stream>`, RFC 6120 §4.4):
    /// it was alive and had finished with every stanza it read from us.
    case streamClosedByServer
    /// A negotiation step did not complete in time.
    case timedOut(String)

    /// Whether the server ended the stream itself and stays up (its `</stream:stream>`, or a
    /// stream error that ends one client's stream on a running server: `conflict`,
    /// `connection-timeout`, `policy-violation`, `not-authorized`, `resource-constraint`):
    /// it was running, and done with every stanza it had read from us. A connection that
    /// merely closed may be a server that died mid-stanza; one shutting down
    /// (`system-shutdown`, `reset`) may drop what it was still routing (ejabberd routes
    /// between processes after archiving), and other conditions say too little.
    public var serverEndedStream: Bool {
        switch self {
        case .streamClosedByServer: true
        case .streamError(let condition, _): [.conflict, .connectionTimeout, .policyViolation, .notAuthorized, .resourceConstraint].contains(condition)
        case .configuration, .resolutionFailed, .connectFailed, .tlsNotOffered, .startTLSRefused, .tls, .authenticationFailed,
            .bindFailed, .registrationFailed, .invalidServerXML, .unexpectedElement, .closedByServer, .timedOut:
            false
        }
    }

    /// What to look at when the server keeps closing the stream with this error.
    public var hint: String? {
        guard case .streamError(let condition, _) = self else { return nil }
        switch condition {
        case .conflict: return "another client uses the same resource; give this client its own `resource`"
        case .policyViolation: return "the server refused something we sent (size or rate limit); check `max_stanza_bytes` and the server's limits"
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .configuration(let text): "configuration: \(text)"
        case .resolutionFailed(let domain, let reason): "cannot resolve \(domain): \(reason)"
        case .connectFailed(let attempts): "cannot connect: " + attempts.joined(separator: "; ")
        case .tlsNotOffered: "server did not offer STARTTLS but TLS is required; not authenticating"
        case .startTLSRefused: "server refused STARTTLS"
        case .tls(let error): error.description
        case .authenticationFailed(let account, let error): "authentication failed for \(account): \(error)"
        case .bindFailed(let condition, let text): "resource binding failed: \(condition)" + (text.map { " (\($0))" } ?? "")
        case .registrationFailed(let condition, let text): "registration refused: \(condition)" + (text.map { " (\($0))" } ?? "")
        case .streamError(let condition, let text): "stream error from server: \(condition.rawValue)" + (text.map { " (\($0))" } ?? "")
        case .invalidServerXML(let error): "invalid XML from server: \(error)"
        case .unexpectedElement(let name): "unexpected element from server: \(name)"
        case .closedByServer: "server closed the connection"
        case .streamClosedByServer: "server closed the stream"
        case .timedOut(let phase): "timed out during \(phase)"
        }
    }
}
