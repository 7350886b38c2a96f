import Bridge
import ArgumentParser
import Foundation
import XMPP

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
                let reason = entry.reason.map { "  (\(VisibleText.escaped($0)))" } ?? ""
                let preview = VisibleText.escaped(String(entry.body.prefix(60)))
                CommandLineOutput.line("\(entry.sequence)  \(entry.state)  \(entry.target)  attempts \(entry.attempts)\(reason)  \(preview)")
            }
        }
    }

    /// Which deliveries a retry or drop names: sequences, or every dead letter.
    struct Selection: ParsableArguments {
        @Argument(help: "Sequences as `queue list` shows them.") var sequences: [Int64] = []
        @Flag(help: "Every dead letter.") var allDead = false

        func validate() throws {
            if self.sequences.isEmpty == !self.allDead { throw ValidationError("name sequences, or --all-dead") }
        }

        /// Sends `op` for the selection; how many deliveries it acted on.
        func apply(_ op: ControlRequest.Operation, config: String?) async throws -> Int {
            let response = try await RouteCommand.send(ControlRequest(op: op, sequences: self.allDead ? nil : self.sequences), config: config)
            return response.count ?? 0
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Queue dead letters anew (or try waiting deliveries now): SEQUENCE… or --all-dead.")
        @OptionGroup var common: Common
        @OptionGroup var selection: Selection

        func run() async throws {
            CommandLineOutput.line("retrying \(try await self.selection.apply(.queueRetry, config: self.common.config))")
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget queued deliveries or dead letters: SEQUENCE… or --all-dead.")
        @OptionGroup var common: Common
        @OptionGroup var selection: Selection

        func run() async throws {
            CommandLineOutput.line("dropped \(try await self.selection.apply(.queueDrop, config: self.common.config))")
        }
    }
}
