@testable import Bridge

/// Room members (issue 10): what `check` refuses, each with its message.
extension BridgeConfigurationTests {
    static let brokenRooms: [Broken] = [
        Broken(
            "room with a resource",
            "[channels.c]\nmembers = [ { account = \"work\", room = \"dev@muc.work.example/bridge\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].room: 'dev@muc.work.example/bridge' is not a room's bare JID"]
        ),
        Broken(
            "room without a localpart",
            "[channels.c]\nmembers = [ { account = \"work\", room = \"muc.work.example\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].room: 'muc.work.example' is not a room's bare JID"]
        ),
        Broken(
            "room nick that is no resourcepart",
            "[channels.c]\nmembers = [ { account = \"work\", room = \"dev@muc.work.example\", nick = \"\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].nick: '' is not a valid nick"]
        ),
        Broken(
            "room and jid in one member",
            "[channels.c]\nmembers = [ { account = \"work\", room = \"dev@muc.work.example\", jid = \"alice@work.example\" }, { local = \"ops\" } ]",
            ["channels.c.members[0]: has both jid and room"]
        ),
        Broken(
            "room keys on a contact",
            "[channels.c]\nmembers = [ { account = \"work\", jid = \"alice@work.example\", nick = \"x\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].nick: applies only to a room member"]
        ),
        Broken(
            "two room password sources",
            "[channels.c]\nmembers = [ { account = \"work\", room = \"dev@muc.work.example\", password_env = \"A\", password_file = \"/nonexistent/room\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].password_file: cannot read /nonexistent/room", "channels.c.members[0]: has two room password sources"]
        ),
        Broken("room on a local", "[channels.c]\nmembers = [ { local = \"ops\", room = \"dev@muc.work.example\" } ]", ["channels.c.members[0].room: does not apply to a local member"]),
        Broken("bad room ping interval", "[accounts.third]\njid = \"me@third.example\"\npassword_env = \"X\"\nroom_ping_interval = \"soon\"", ["accounts.third.room_ping_interval: 'soon' is not a period"]),
    ]
}
