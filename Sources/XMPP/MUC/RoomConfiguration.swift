/// A room an account sits in (XEP-0045 §7.2): the room's bare JID, the nick asked for, and
/// the room password if it has one.
public struct RoomConfiguration: Hashable, Sendable {
    public var jid: JID
    public var nick: String
    public var password: String?

    public init(jid: JID, nick: String, password: String? = nil) {
        self.jid = jid.bare
        self.nick = nick
        self.password = password
    }
}
