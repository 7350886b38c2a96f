/// Fired inbound by ``TLSHandler`` when the handshake is done; the stream negotiation
/// restarts the stream on it (RFC 6120 §5.4.3.3).
public enum TLSUserEvent: Hashable, Sendable {
    /// The handshake finished. `channelBinding` holds RFC 9266 `tls-exporter` data (TLS 1.3 only).
    case handshakeCompleted(protocolVersion: String, channelBinding: [UInt8]?)
}
