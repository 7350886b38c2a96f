import Bridge
import BridgeState
import ArgumentParser
import Foundation

/// `xmpp-bridge state migrate --from bridge.sqlite --to postgresql://…` (issue 26): moves a
/// single host's state into PostgreSQL, for several instances (``StateTransfer``).
struct StateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Move the state between databases.",
        subcommands: [Migrate.self]
    )

    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a SQLite state (stopped bridge) into an empty PostgreSQL database.",
            discussion: """
                Routes, id map, queue, dead letters, stream sessions, roster mirror snapshots, deduplication keys, \
                paging and gateway registrations and the archive are copied in one transaction; nothing is \
                written when the target holds state already or anything fails. The bridge using the SQLite \
                file must be stopped (its lock is taken). The password comes from --password-file or \
                --password-env, never the command line.
                """
        )

        @Option(help: "The SQLite state file (the `state` of the single-host configuration).")
        var from: String

        @Option(help: "The PostgreSQL connection string, postgresql://USER@HOST[,HOST…]/DATABASE.")
        var to: String

        @Option(help: "A file holding the PostgreSQL role's password.")
        var passwordFile: String?

        @Option(help: "An environment variable holding the PostgreSQL role's password.")
        var passwordEnv: String?

        func run() throws {
            guard self.to.hasPrefix("postgresql://") || self.to.hasPrefix("postgres://") else {
                CommandLineOutput.error("--to must be a postgresql:// connection string")
                throw ExitStatus.configuration.exitCode
            }
            guard FileManager.default.fileExists(atPath: self.from) else {
                CommandLineOutput.error("no SQLite state at \(self.from)")
                throw ExitStatus.configuration.exitCode
            }
            let source: PasswordSource?
            switch (self.passwordFile, self.passwordEnv) {
            case (let file?, nil): source = .file(file)
            case (nil, let variable?): source = .environment(variable)
            case (nil, nil): source = nil
            case (_?, _?):
                CommandLineOutput.error("give --password-file or --password-env, not both")
                throw ExitStatus.configuration.exitCode
            }
            do {
                let lock = try InstanceLock(path: self.from + ".lock", mode: .exclusive)
                defer { withExtendedLifetime(lock) {} }
                let store = try OfflineStateAccess.openForWriting(path: self.from, logger: .init(label: "xmpp-bridge"))
                let target = try PostgresStateStore(url: self.to, password: try source?.read())
                let summary = try StateTransfer(source: store, target: try target.connect(purpose: "state migrate")).run()
                for (table, rows) in summary { CommandLineOutput.line("\(table) \(rows)") }
                // Not the connection string: it may hold a password.
                CommandLineOutput.line("copied \(summary.map(\.rows).reduce(0, +)) rows into PostgreSQL")
            } catch InstanceLock.Failure.held {
                CommandLineOutput.error("a bridge is running on \(self.from): stop it first")
                throw ExitStatus.temporarilyUnavailable.exitCode
            } catch {
                CommandLineOutput.error("state migrate: \(error)")
                throw ExitStatus.configuration.exitCode
            }
        }
    }
}
