import Bridge
import ArgumentParser
import XMPP

/// `xmpp-bridge rooms`: each account's rooms (XEP-0045) as the running daemon sees them:
/// joined, joining, waiting to rejoin or stopped (with why), our nick and how many others
/// are in the room.
struct RoomsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms",
        abstract: "Show each room's state (joined, joining, waiting, stopped and why), nick and occupants."
    )

    @Option(help: "The configuration file.")
    var config: String?

    @Flag(help: "JSON output.")
    var json = false

    func run() async throws {
        let response = try await RouteCommand.send(ControlRequest(op: .rooms), config: self.config)
        let rooms = response.rooms ?? []
        if self.json {
            try CommandLineOutput.json(rooms)
            return
        }
        if rooms.isEmpty { CommandLineOutput.line("no rooms") }
        for room in rooms { CommandLineOutput.line(Self.line(room)) }
    }

    /// `work:dev@muc.example.org  joined  nick bridge  occupants 4  (reason)`.
    static func line(_ room: ControlResponse.RoomEntry) -> String {
        let reason = room.reason.map { "  (\(VisibleText.escaped($0)))" } ?? ""
        return "\(room.account):\(room.room)  \(room.state)  nick \(VisibleText.escaped(room.nick))  occupants \(room.occupants)\(reason)"
    }
}
