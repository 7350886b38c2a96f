/// Fired inbound by ``TLSHandler`` when the handshake is done; the stream negotiation
/// restarts the stream on it (RFC 6120 §5.4.3.3).
public enum TLSUserEvent: Hashable, Sendable {
    /// The handshake finished; `channelBinding` holds what the connection can bind a SCRAM
    /// or hashed-token login to (RFC 9266, RFC 5929).
    case handshakeCompleted(protocolVersion: String, channelBinding: ChannelBindingData)
}
