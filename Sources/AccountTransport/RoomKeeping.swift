import TransportCore
import XMPP

/// A transport that sits in multi-user chat rooms (XEP-0045): an XMPP account. The bridge's
/// room configuration and `xmpp-bridge rooms` use it, so nothing downcasts to a concrete
/// transport.
public protocol RoomKeeping: Sendable {
    /// The rooms to sit in; joined or left at once when online. `cursors`: where each room's
    /// archive catch-up resumes (XEP-0313).
    func setRooms(_ rooms: [RoomConfiguration], cursors: [JID: ArchiveCursor]) async
    /// Each room's state, for `status` and `rooms`.
    func roomStatuses() async -> [RoomStatus]
    /// The key a room's archive cursor is stored under (``ResumePoint/key``).
    func resumeKey(room: JID) -> String
}
