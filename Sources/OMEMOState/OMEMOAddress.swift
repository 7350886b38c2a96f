/// One OMEMO device of one account (XEP-0384 v0.3 §4.2): the account's bare JID and the
/// device id from its device list. What sessions and remembered identity keys are kept under.
public struct OMEMOAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The bare JID, as the device list's publisher is addressed.
    public var jid: String
    public var device: UInt32

    public init(jid: String, device: UInt32) {
        self.jid = jid
        self.device = device
    }

    public static func < (lhs: OMEMOAddress, rhs: OMEMOAddress) -> Bool {
        (lhs.jid, lhs.device) < (rhs.jid, rhs.device)
    }

    public var description: String { "\(self.jid)/\(self.device)" }
}
