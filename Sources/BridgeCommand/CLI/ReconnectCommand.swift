import Bridge
import ArgumentParser

/// `xmpp-bridge reconnect NAME`: the running daemon makes a fresh connection for an account
/// (also one that gave up after a permanent error) or restarts a local transport.
struct ReconnectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconnect",
        abstract: "Make the running bridge connect an account anew (also after it gave up)."
    )

    @Option(help: "The configuration file.")
    var config: String?

    @Argument(help: "The account (or local transport) name.")
    var name: String

    func run() async throws {
        _ = try await RouteCommand.send(ControlRequest(op: .reconnect, transport: self.name), config: self.config)
        CommandLineOutput.line("reconnecting \(self.name)")
    }
}
