import Foundation

/// A local transport that shows channel members' presence changes to its users as JSON
/// events (socket subscribers; stdout in JSON mode).
public protocol PresenceEventReceiving: Sendable {
    func receivePresence(channel: String, contact: Endpoint, nick: String, state: PresenceState) async
    /// Someone entered (`joined`) or left a room that is a member of `channel` (XEP-0045).
    func receiveOccupant(channel: String, room: Endpoint, nick: String, joined: Bool) async
    /// A recipient's client sent a receipt for a copy of a message relayed in `channel` (``DeliveryReceipt/jsonLine``).
    func receiveReceipt(_ receipt: DeliveryReceipt) async
    /// An alert relayed in `channel` was acknowledged; `id` is its id at its source
    /// (``AlertAck/jsonLine(channel:id:)``).
    func receiveAlertAck(_ ack: AlertAck, channel: String, id: String) async
}

extension PresenceEventReceiving {
    public func receiveReceipt(_ receipt: DeliveryReceipt) async {}
    public func receiveAlertAck(_ ack: AlertAck, channel: String, id: String) async {}
}
