/// What an OMEMO device keeps between runs (XEP-0384 v0.3 §5), as libomemo-c serializes
/// it: the device id (also the Signal registration id, as Dino and Conversations use it),
/// the identity key pair, the one-time and signed prekeys, a session per remote device
/// and the identity key each remote device presented. Restored as is after a restart: the
/// same device, no new key exchange.
public struct OMEMOKeys: Hashable, Sendable {
    public var deviceID: UInt32
    /// The identity's public key, serialized (0x05 and 32 bytes).
    public var identityPublicKey: [UInt8]
    /// The identity's private key (32 bytes).
    public var identityPrivateKey: [UInt8]
    /// One-time prekeys by id (libomemo-c's `session_pre_key` records).
    public var preKeys: [UInt32: [UInt8]]
    /// The id the next one-time prekey gets: ids are never used twice, so a contact holding
    /// an old bundle cannot start a session on a different key under a consumed id.
    public var nextPreKeyID: UInt32
    /// Signed prekeys by id (`session_signed_pre_key` records): the current one, and the
    /// previous ones while sessions may still start from them.
    public var signedPreKeys: [UInt32: [UInt8]]
    /// The session with each remote device (`session_record`).
    public var sessions: [OMEMOAddress: [UInt8]]
    /// The identity key (serialized) each remote device presented when its session began.
    public var identities: [OMEMOAddress: [UInt8]]

    public init(
        deviceID: UInt32, identityPublicKey: [UInt8], identityPrivateKey: [UInt8], preKeys: [UInt32: [UInt8]] = [:], nextPreKeyID: UInt32 = 1,
        signedPreKeys: [UInt32: [UInt8]] = [:], sessions: [OMEMOAddress: [UInt8]] = [:], identities: [OMEMOAddress: [UInt8]] = [:]
    ) {
        self.deviceID = deviceID
        self.identityPublicKey = identityPublicKey
        self.identityPrivateKey = identityPrivateKey
        self.preKeys = preKeys
        self.nextPreKeyID = nextPreKeyID
        self.signedPreKeys = signedPreKeys
        self.sessions = sessions
        self.identities = identities
    }

    /// Applies `changes` (what a ``SignalStore`` recorded since it was last asked).
    public mutating func apply(_ changes: OMEMOKeyChanges) {
        for (id, record) in changes.preKeys { self.preKeys[id] = record }
        if let next = changes.nextPreKeyID { self.nextPreKeyID = next }
        for (id, record) in changes.signedPreKeys { self.signedPreKeys[id] = record }
        for (address, record) in changes.sessions { self.sessions[address] = record }
        for (address, key) in changes.identities { self.identities[address] = key }
    }
}
