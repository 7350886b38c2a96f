import ArgumentParser
import Foundation

/// `xmpp-bridge queue list|retry|drop`: queued deliveries and dead letters (issue 8),
/// through the running daemon's control socket, or on the state database when none runs.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Show and act on queued deliveries and dead letters.",
        subcommands: [List.self, Retry.self, Drop.self]
    )

    struct Common: ParsableArguments {
        @Option(help: "The configuration file.")
        var config: String?
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List queued deliveries and dead letters, oldest first.")
        @OptionGroup var common: Common
        @Option(help: "Only this account or local transport.")
        var transport: String?
        @Flag(help: "JSON output.")
        var json = false

        func run() async throws {
            let response = try await RouteCommand.send(ControlRequest(op: .queueList, transport: self.transport), config: self.common.config)
            let entries = response.queue ?? []
            if self.json {
                try CommandLineOutput.json(entries)
                return
            }
            if entries.isEmpty { CommandLineOutput.line("nothing queued, no dead letters") }
            for entry in entries {
                let reason = entry.reason.map { "  (\(ListenCommand.visible($0)))" } ?? ""
                let preview = ListenCommand.visible(String(entry.body.prefix(60)))
                CommandLineOutput.line("\(entry.sequence)  \(entry.state)  \(entry.target)  attempts \(entry.attempts)\(reason)  \(preview)")
            }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Queue dead letters anew (or try waiting deliveries now): SEQUENCE… or --all-dead.")
        @OptionGroup var common: Common
        @Argument(help: "Sequences as `queue list` shows them.") var sequences: [Int64] = []
        @Flag(help: "Every dead letter.") var allDead = false

        func validate() throws {
            if self.sequences.isEmpty == !self.allDead { throw ValidationError("name sequences, or --all-dead") }
        }

        func run() async throws {
            let response = try await RouteCommand.send(
                ControlRequest(op: .queueRetry, sequences: self.allDead ? nil : self.sequences), config: self.common.config
            )
            CommandLineOutput.line("retrying \(response.count ?? 0)")
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget queued deliveries or dead letters: SEQUENCE… or --all-dead.")
        @OptionGroup var common: Common
        @Argument(help: "Sequences as `queue list` shows them.") var sequences: [Int64] = []
        @Flag(help: "Every dead letter.") var allDead = false

        func validate() throws {
            if self.sequences.isEmpty == !self.allDead { throw ValidationError("name sequences, or --all-dead") }
        }

        func run() async throws {
            let response = try await RouteCommand.send(
                ControlRequest(op: .queueDrop, sequences: self.allDead ? nil : self.sequences), config: self.common.config
            )
            CommandLineOutput.line("dropped \(response.count ?? 0)")
        }
    }
}
