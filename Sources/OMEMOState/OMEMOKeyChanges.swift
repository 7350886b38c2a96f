/// What an OMEMO device's keys became since they were last committed (the write-back of
/// ``SignalStore``): each record written, or nil where it was removed (a one-time prekey a
/// session consumed, a session deleted). Committed with the message whose encryption or
/// decryption made it, before that message goes on: after kill -9 no message key is
/// used twice and no consumed prekey comes back.
public struct OMEMOKeyChanges: Hashable, Sendable {
    public var preKeys: [UInt32: [UInt8]?] = [:]
    /// The next one-time prekey id, when prekeys were made.
    public var nextPreKeyID: UInt32?
    public var signedPreKeys: [UInt32: [UInt8]?] = [:]
    public var sessions: [OMEMOAddress: [UInt8]?] = [:]
    public var identities: [OMEMOAddress: [UInt8]] = [:]

    public init() {}

    /// Every record of `keys` written, and its next prekey id: a new device as changes.
    public init(writing keys: OMEMOKeys) {
        self.preKeys = keys.preKeys.mapValues { .some($0) }
        self.signedPreKeys = keys.signedPreKeys.mapValues { .some($0) }
        self.sessions = keys.sessions.mapValues { .some($0) }
        self.identities = keys.identities
        self.nextPreKeyID = keys.nextPreKeyID
    }

    public var isEmpty: Bool {
        self.preKeys.isEmpty && self.nextPreKeyID == nil && self.signedPreKeys.isEmpty && self.sessions.isEmpty && self.identities.isEmpty
    }

    /// `later` over these: the last write of each record wins.
    public mutating func merge(_ later: OMEMOKeyChanges) {
        self.preKeys.merge(later.preKeys) { _, new in new }
        if let next = later.nextPreKeyID { self.nextPreKeyID = next }
        self.signedPreKeys.merge(later.signedPreKeys) { _, new in new }
        self.sessions.merge(later.sessions) { _, new in new }
        self.identities.merge(later.identities) { _, new in new }
    }
}
