import Bridge
import ArgumentParser
import Foundation

/// `xmpp-bridge roster ACCOUNT`: the account's contacts with subscription state, groups,
/// current presence and whether a roster mirror owns them, from the running daemon.
struct RosterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roster",
        abstract: "Show an account's contacts (subscription, groups, presence, mirrored) from the running bridge."
    )

    @Argument(help: "The account name ([accounts.NAME]).")
    var account: String

    @Option(help: "The configuration file.")
    var config: String?

    @Flag(help: "JSON output (one object with a `roster` array).")
    var json = false

    func run() async throws {
        let response = try await RouteCommand.send(ControlRequest(op: .roster, transport: self.account), config: self.config)
        if self.json {
            try CommandLineOutput.json(response.roster ?? [])
            return
        }
        for entry in response.roster ?? [] {
            let name = entry.name.map { " (\($0))" } ?? ""
            let groups = entry.groups.isEmpty ? "" : " [" + entry.groups.joined(separator: ", ") + "]"
            let presence = entry.availability + (entry.status.map { ": \($0)" } ?? "")
            let flags = (entry.pending ? " pending" : "") + (entry.mirrored ? " mirrored" : "")
            CommandLineOutput.line("\(entry.jid)\(name)\(groups)  \(entry.subscription)\(flags)  \(presence)")
        }
    }
}
