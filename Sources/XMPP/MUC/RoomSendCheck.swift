/// What a delivery to a JID meets in a session's rooms (XEP-0045 §7.2), from
/// ``XMPPSession/checkRoomSend(to:id:)``.
public enum RoomSendCheck: Hashable, Sendable {
    /// The JID is no room of this session: a contact.
    case notARoom
    /// We are in the room; the message's id is remembered to recognise its reflection.
    case joined
    /// Not in the room now (joining, rejoining, stopped): the delivery waits.
    case notJoined(String)
    /// The room was taken out of the configuration: not to be sent as to a contact.
    case removed
}
