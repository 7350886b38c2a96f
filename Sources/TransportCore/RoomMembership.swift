/// How an account sits in a room that is a channel member (XEP-0045 §7.2): the nick it
/// joins with (nil: the account's localpart) and where the room password comes from, if
/// the room has one. Only the source is stored, never the password.
public struct RoomMembership: Hashable, Sendable, Codable {
    public var nick: String?
    public var passwordFile: String?
    public var passwordEnvironment: String?

    public init(nick: String? = nil, passwordFile: String? = nil, passwordEnvironment: String? = nil) {
        self.nick = nick
        self.passwordFile = passwordFile
        self.passwordEnvironment = passwordEnvironment
    }
}
