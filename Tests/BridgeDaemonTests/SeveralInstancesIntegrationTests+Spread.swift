import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing

extension SeveralInstancesIntegrationTests {
    /// One line of `status --json` with several instances.
    struct ClusterStatus: Decodable {
        struct Instance: Decodable {
            var name: String
            var alive: Bool
        }

        struct Transport: Decodable {
            var name: String
            var connected: Bool
            var owner: String?
        }

        var instances: [Instance]
        var transports: [Transport]
    }

    /// `status --json` from `bridge`; nil while it does not answer.
    static func status(of bridge: BridgeDaemon, in directory: String) async -> ClusterStatus? {
        let config = bridge.config
        guard let run = try? await Subprocess.offThread({ try MirrorSupport.command(["status", "--json", "--config", config], in: directory) }),
            run.status == 0
        else { return nil }
        return try? JSONDecoder().decode(ClusterStatus.self, from: Data(run.output.utf8))
    }

    @Test("300 accounts over 3 instances started together: every account online, each run by one instance, none with more than 40 %")
    func spread() async throws {
        let names = (1...300).map { String(format: "s%03d", $0) }
        let server = try await ProsodyServer.started()
        defer { server.shutdown() }
        try await Subprocess.offThread { try server.register(names, password: "pw") }
        // The default time to live (10 s), not the takeover tests' 3 s: this test is about
        // the spread at start, and 300 logins on three debug builds beside other tests can
        // hold an instance's renewal back for more than 3 s, after which the others take
        // its accounts, and it theirs, until the load passes.
        let bridges = try await Self.start(on: server, names: ["node-a", "node-b", "node-c"], accounts: names, ttl: 10)
        defer { bridges.forEach { $0.terminate() } }
        // Settled: every account connected on exactly the instance that owns it.
        var last: [ClusterStatus] = []
        let settled = await eventually(timeout: .seconds(120), every: .milliseconds(500)) {
            var views: [ClusterStatus] = []
            for bridge in bridges {
                guard let view = await Self.status(of: bridge, in: server.directory) else { return false }
                views.append(view)
            }
            last = views
            let connected = views.flatMap { view in view.transports.filter(\.connected).map(\.name) }
            return connected.count == names.count && Set(connected).count == names.count
        }
        let owners = Dictionary(grouping: last.first?.transports.compactMap(\.owner) ?? [], by: { $0 }).mapValues(\.count)
        print("300 accounts over 3 instances: owned \(owners.sorted { $0.key < $1.key }), settled \(settled)")
        #expect(settled, "not every account connected once: \(last.map { $0.transports.filter(\.connected).count })")
        #expect(owners.values.reduce(0, +) == names.count, "\(owners)")
        #expect(owners.values.allSatisfy { $0 * 100 <= names.count * 40 }, "\(owners)")
        #expect(last.first?.instances.filter(\.alive).count == 3)
        for bridge in bridges { #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))") }
    }
}
