/// Why a session operation failed (RFC 6120 §8.3 for stanza errors).
public enum XMPPSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No connection is up right now (connecting, reconnecting, or stopped).
    case notConnected
    /// The request got no answer in time.
    case timedOut(id: String)
    /// The connection ended before the answer came.
    case disconnected
    /// The entity answered with an error.
    case stanzaError(StanzaError)
    /// The session was stopped.
    case stopped
    /// The stanza could not be written.
    case writeFailed(String)

    public var description: String {
        switch self {
        case .notConnected: "not connected"
        case .timedOut(let id): "request \(id) timed out"
        case .disconnected: "connection lost before the answer"
        case .stanzaError(let error): "stanza error \(error)"
        case .stopped: "session stopped"
        case .writeFailed(let reason): "write failed: \(reason)"
        }
    }
}
