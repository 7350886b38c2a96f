import OMEMOState

/// Why an OMEMO message could not be read (XEP-0384 v0.3 §6): each leads to the notice to
/// its sender and a log line, and the broken cases to a session repair (a new key exchange).
public enum OMEMODecryptionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The sender sealed no key for our device (it does not know us yet, or lists an old id).
    case notForThisDevice(sender: OMEMOAddress)
    /// The session could not open the key: none, a duplicate, a prekey we do not have, a
    /// bad MAC. `repairable`: a new key exchange would let the next messages through.
    case session(sender: OMEMOAddress, reason: String, repairable: Bool)
    /// The key opened but the payload did not authenticate.
    case payload(sender: OMEMOAddress, reason: String)
    /// Its message key was used already: a message read before, handed over again (by the
    /// server after a restart, or replayed). Nothing to tell or mend.
    case alreadyRead(sender: OMEMOAddress)

    public var sender: OMEMOAddress {
        switch self {
        case .notForThisDevice(let sender), .session(let sender, _, _), .payload(let sender, _), .alreadyRead(let sender): sender
        }
    }

    /// Whether a new key exchange with the sender's device would mend it.
    public var wantsRepair: Bool {
        switch self {
        case .notForThisDevice: true
        case .session(_, _, let repairable): repairable
        case .payload, .alreadyRead: false
        }
    }

    public var description: String {
        switch self {
        case .notForThisDevice(let sender): "OMEMO message from \(sender) has no key for this device"
        case .session(let sender, let reason, _): "OMEMO message from \(sender) could not be decrypted: \(reason)"
        case .payload(let sender, let reason): "OMEMO payload from \(sender) could not be opened: \(reason)"
        case .alreadyRead(let sender): "OMEMO message from \(sender) was read before"
        }
    }
}
