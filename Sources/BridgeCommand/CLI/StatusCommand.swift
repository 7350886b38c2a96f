import Bridge
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
            // Several instances: an object with both lists; one: the transports, as before.
            if let instances = response.instances {
                try CommandLineOutput.json(Cluster(instances: instances, transports: response.transports ?? []))
            } else {
                try CommandLineOutput.json(response.transports ?? [])
            }
            return
        }
        let this = response.instances?.first { $0.this }?.name
        for instance in response.instances ?? [] {
            CommandLineOutput.line(Self.line(instance))
        }
        for transport in response.transports ?? [] {
            CommandLineOutput.line(Self.line(transport, here: this))
            for room in transport.rooms ?? [] { CommandLineOutput.line("  room " + RoomsCommand.line(room)) }
            for user in transport.gatewayUsers ?? [] { CommandLineOutput.line("  user " + GatewayCommand.Users.line(user)) }
        }
    }

    /// `status --json` with several instances.
    struct Cluster: Encodable {
        var instances: [ControlResponse.InstanceStatus]
        var transports: [ControlResponse.TransportStatus]
    }

    /// `instance node-a (this)  alive  heartbeat 2026-11-26T21:40:00Z`.
    static func line(_ instance: ControlResponse.InstanceStatus) -> String {
        "instance \(VisibleText.escaped(instance.name))\(instance.this ? " (this)" : "")  \(instance.alive ? "alive" : "silent")  heartbeat \(instance.heartbeat)"
    }

    /// `work [xmpp]  connected  queued 0  dead 0`; with several instances, a transport
    /// another instance runs is `work [xmpp]  on node-b` (its queue is counted there), one
    /// nobody runs now `work [xmpp]  no owner  queued 0  dead 0`.
    static func line(_ transport: ControlResponse.TransportStatus, here: String? = nil) -> String {
        if let here, let owner = transport.owner, owner != here {
            return "\(transport.name) [\(transport.kind)]  on \(VisibleText.escaped(owner))"
        }
        let leasedNowhere = here != nil && transport.owner == nil && !transport.connected && transport.kind != "http"
        let state = transport.connected ? "connected" : transport.stopped ? "stopped" : leasedNowhere ? "no owner" : "not connected"
        let error = transport.lastError.map { "  (\(VisibleText.escaped($0)))" } ?? ""
        let age = transport.oldestAgeSeconds.map { String(format: "  oldest %.0fs", $0) } ?? ""
        return "\(transport.name) [\(transport.kind)]  \(state)  queued \(transport.queued)\(age)  dead \(transport.dead)\(error)"
    }
}
