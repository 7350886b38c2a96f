import Bridge
import ArgumentParser
import Foundation
import LocalTransport
import Logging
import TransportCore

#if canImport(Glibc)
import Glibc
#endif

/// `xmpp-bridge route list|add|remove`: changes the routing table at run time. Talks to
/// the running daemon over its control socket; without a daemon, edits the state
/// database directly. Changes persist across restarts either way.
struct RouteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "route",
        abstract: "List, add or remove channel members at run time (persisted).",
        subcommands: [List.self, Add.self, Remove.self]
    )

    struct Common: ParsableArguments {
        @Option(help: "The configuration file.")
        var config: String?
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every channel and its members.")
        @OptionGroup var common: Common
        @Flag(help: "JSON output.")
        var json = false

        func run() async throws {
            let response = try await RouteCommand.send(ControlRequest(op: .list), config: self.common.config)
            if self.json {
                try CommandLineOutput.json(response)
                return
            }
            for channel in response.channels ?? [] {
                CommandLineOutput.line(channel.name)
                for member in channel.members {
                    let room = member.room == true ? " (room\(member.nick.map { ", nick \($0)" } ?? ""))" : ""
                    CommandLineOutput.line("  \(member.direction.padding(toLength: 5, withPad: " ", startingAt: 0)) \(member.transport)\(member.address.map { ":\($0)" } ?? "")\(room)")
                }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a member: ACCOUNT:JID, ACCOUNT:ROOM --room, or LOCAL.")
        @OptionGroup var common: Common
        @Argument var channel: String
        @Argument var member: String
        @Option(help: "in, out or inout.")
        var direction = "inout"
        @Flag(help: "The JID is a room (XEP-0045) the account joins.")
        var room = false
        @Option(help: "The room nick (default: the account's localpart).")
        var nick: String?

        func run() async throws {
            let member = Endpoint(description: self.member)
            let (transport, address) = (member.transport, member.address)
            _ = try await RouteCommand.send(
                ControlRequest(
                    op: .add, channel: self.channel, transport: transport, address: address, direction: self.direction,
                    room: self.room ? true : nil, nick: self.nick
                ),
                config: self.common.config
            )
            CommandLineOutput.line("added \(self.member) to \(self.channel)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a member: ACCOUNT:JID or LOCAL.")
        @OptionGroup var common: Common
        @Argument var channel: String
        @Argument var member: String

        func run() async throws {
            let member = Endpoint(description: self.member)
            let (transport, address) = (member.transport, member.address)
            _ = try await RouteCommand.send(
                ControlRequest(op: .remove, channel: self.channel, transport: transport, address: address),
                config: self.common.config
            )
            CommandLineOutput.line("removed \(self.member) from \(self.channel)")
        }
    }

    /// Through the daemon if it runs, else on the database (``OfflineStateAccess``); a refusal
    /// exits 2 with the reason, a daemon that is starting 75.
    static func send(_ request: ControlRequest, config: String?) async throws -> ControlResponse {
        let configuration = try RunCommand.load(config ?? ConfigurationLoader.defaultFile())
        let path = configuration.settings.controlSocketPath
        let response: ControlResponse
        if UnixLineServer.someoneListens(at: path), let answer = ControlClient.exchange(request, path: path) {
            response = answer
        } else {
            let logger = Logger(label: "xmpp-bridge.offline", factory: { StreamLogHandler.standardError(label: $0) })
            response = OfflineStateAccess(configuration: configuration, logger: logger).apply(request)
            if request.op == .add || request.op == .remove, response.ok {
                CommandLineOutput.error("no running bridge; changed the state database (effective at the next start)")
            }
        }
        if !response.ok, response.error == OfflineStateAccess.starting {
            CommandLineOutput.error(OfflineStateAccess.starting)
            throw ExitStatus.temporarilyUnavailable.exitCode
        }
        guard response.ok else {
            CommandLineOutput.error(response.error ?? "refused")
            throw ExitStatus.configuration.exitCode
        }
        return response
    }
}
