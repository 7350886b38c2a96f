import ArgumentParser
import Foundation
import XMPP

/// `xmpp-bridge status`: each account's and local transport's connection state, queue
/// depth and last error (from the running daemon; without one, the queue depths).
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each transport's connection state, queue depth and last error."
    )

    @Option(help: "The configuration file.")
    var config: String?

    @Flag(help: "JSON output.")
    var json = false

    func run() async throws {
        let response = try await RouteCommand.send(ControlRequest(op: .status), config: self.config)
        if self.json {
            try CommandLineOutput.json(response.transports ?? [])
            return
        }
        for transport in response.transports ?? [] {
            CommandLineOutput.line(Self.line(transport))
            for room in transport.rooms ?? [] { CommandLineOutput.line("  room " + RoomsCommand.line(room)) }
            for user in transport.gatewayUsers ?? [] { CommandLineOutput.line("  user " + GatewayCommand.Users.line(user)) }
        }
    }

    /// `work [xmpp]  connected  queued 0  dead 0`.
    static func line(_ transport: ControlResponse.TransportStatus) -> String {
        let state = transport.connected ? "connected" : transport.stopped ? "stopped" : "not connected"
        let error = transport.lastError.map { "  (\(VisibleText.escaped($0)))" } ?? ""
        let age = transport.oldestAgeSeconds.map { String(format: "  oldest %.0fs", $0) } ?? ""
        return "\(transport.name) [\(transport.kind)]  \(state)  queued \(transport.queued)\(age)  dead \(transport.dead)\(error)"
    }
}
