import Bridge
import ArgumentParser
import XMPP

/// `xmpp-bridge gateway list|users|remove`: the gateways (XEP-0114 components) with their
/// connection state, their users and linked accounts, and removing a user who registered
/// in band. From the running daemon, else from the state database.
struct GatewayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "List gateways and their users, or remove a registered user.",
        subcommands: [List.self, Users.self, Remove.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each gateway: its component's connection, queue and users.")

        @Option(help: "The configuration file.")
        var config: String?

        @Flag(help: "JSON output.")
        var json = false

        func run() async throws {
            let response = try await RouteCommand.send(ControlRequest(op: .status), config: self.config)
            let gateways = (response.transports ?? []).filter { $0.kind == "gateway" }
            if self.json {
                try CommandLineOutput.json(gateways)
                return
            }
            if gateways.isEmpty { CommandLineOutput.line("no gateways") }
            for gateway in gateways {
                CommandLineOutput.line(StatusCommand.line(gateway))
                for user in gateway.gatewayUsers ?? [] { CommandLineOutput.line("  " + Users.line(user)) }
            }
        }
    }

    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Each gateway user and the account linked for them.")

        @Option(help: "The configuration file.")
        var config: String?

        @Argument(help: "Only this gateway's users (its [gateway.NAME]).")
        var gateway: String?

        @Flag(help: "JSON output.")
        var json = false

        func run() async throws {
            let response = try await RouteCommand.send(ControlRequest(op: .gatewayUsers, gateway: self.gateway), config: self.config)
            let users = response.gatewayUsers ?? []
            if self.json {
                try CommandLineOutput.json(users)
                return
            }
            if users.isEmpty { CommandLineOutput.line("no gateway users") }
            for user in users { CommandLineOutput.line(Self.line(user)) }
        }

        /// `home: alice@work.example → home (bob@home.example)  configured`.
        static func line(_ user: ControlResponse.GatewayUserEntry) -> String {
            "\(user.gateway): \(VisibleText.escaped(user.user)) → \(VisibleText.escaped(user.account)) (\(VisibleText.escaped(user.address)))  \(user.configured ? "configured" : "registered")"
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget a user who registered in band: the link and its stored password.")

        @Option(help: "The configuration file.")
        var config: String?

        @Option(help: "Only on this gateway (its [gateway.NAME]).")
        var gateway: String?

        @Argument(help: "The user's bare JID.")
        var user: String

        func run() async throws {
            let response = try await RouteCommand.send(ControlRequest(op: .gatewayRemove, address: self.user, gateway: self.gateway), config: self.config)
            CommandLineOutput.line("removed \(VisibleText.escaped(self.user)) from \(response.count ?? 0) gateway(s)")
        }
    }
}
