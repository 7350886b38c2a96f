import OMEMOState

/// What an OMEMO 0.3 message opened to (XEP-0384 v0.3 §5–6).
public struct OMEMODecrypted: Hashable, Sendable {
    /// The device that sent it.
    public var sender: OMEMOAddress
    /// The message's text; nil for a key transport (nothing to relay).
    public var plaintext: [UInt8]?
    /// It was a prekey message: a session started (or restarted) and one of our one-time
    /// prekeys is used up, so the bundle needs a new one.
    public var startedSession: Bool
    /// The identity key the sender's session was made with (serialized), for trust.
    public var identityKey: [UInt8]?

    public init(sender: OMEMOAddress, plaintext: [UInt8]?, startedSession: Bool, identityKey: [UInt8]?) {
        self.sender = sender
        self.plaintext = plaintext
        self.startedSession = startedSession
        self.identityKey = identityKey
    }
}
