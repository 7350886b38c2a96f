import Foundation
import IntegrationSupport
import LocalArchive
import TestServers
import TestSupport
import Testing
import TransportCore
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The local archive with the real daemon and a real Prosody (issue 25): what the HTTP
/// ingress relays to bob is in `history` (text and JSON, a search, through the control
/// socket and without a daemon) and in `GET /channels/{channel}/messages`, page by page;
/// a message committed just before kill -9 is in the archive after it.
@Suite("local archive against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct ArchiveIntegrationTests {
    typealias Setup = HTTPIngressIntegrationTests.Setup
    static let token = HTTPIngressIntegrationTests.token

    static func history(_ arguments: [String], setup: Setup) throws -> [ArchivedMessage] {
        let result = try MirrorSupport.command(["history", "--json", "--config", setup.config] + arguments, in: setup.server.directory)
        guard result.status == 0 else { throw TestFailure("history \(arguments) failed: \(result.errors)") }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601withFractionalSeconds
        return try result.output.split(separator: "\n").map { try decoder.decode(ArchivedMessage.self, from: Data($0.utf8)) }
    }

    @Test("what reaches bob is archived with its copy's id: history lists and searches it with the daemon and without, and the HTTP route pages through it with a cursor, for members only")
    func historyAndHTTP() async throws {
        let setup = try await Setup.start(
            extraConfig: """

                [channels.private]
                members = [ { local = "sub", direction = "out" }, { account = "home", jid = "bob@example.test", direction = "in" } ]
                """
        )
        var bridge = try await setup.startBridge()
        defer { bridge.terminate() }
        let bodies = ["disk full on db1", "backup done", "disk full on db2", "deploy finished"]
        for body in bodies {
            #expect(try await setup.http.post("/channels/alerts", token: Self.token, body: body).status == 202)
        }
        #expect(await Received.bodies(setup.bob.log, count: bodies.count, timeout: .seconds(15)).count == bodies.count)

        // Through the control socket: oldest first, every field; a search, best first.
        let listed = try Self.history(["alerts"], setup: setup)
        #expect(listed.map(\.body) == bodies, "stderr: \(bridge.run.errors.suffix(2000))")
        let first = try #require(listed.first)
        #expect(first.channel == "alerts" && first.source == Endpoint(transport: "web") && !first.bridgeMade)
        #expect(first.copies.contains { $0.target == Endpoint(transport: "home", address: "bob@example.test") && !$0.id.isEmpty })
        #expect(Set(try Self.history(["--search", "DISK full"], setup: setup).map(\.body)) == ["disk full on db1", "disk full on db2"])
        #expect(try Self.history(["--search", "disk", "--limit", "1"], setup: setup).count == 1)
        let text = try MirrorSupport.command(["history", "alerts", "--since", "1h", "--config", setup.config], in: setup.server.directory)
        #expect(text.status == 0 && text.output.split(separator: "\n").count == bodies.count && text.output.contains("[alerts] "))
        #expect(try MirrorSupport.command(["history", "--since", "yesterday", "--config", setup.config], in: setup.server.directory).status != 0)

        // The HTTP route: newest first, two a page, then the cursor.
        var reply = try await setup.http.get("/channels/alerts/messages?limit=2", token: Self.token)
        #expect(reply.status == 200, "\(reply)")
        var page = try #require(reply.json)
        #expect((page["messages"] as? [[String: Any]])?.compactMap { $0["body"] as? String } == ["deploy finished", "disk full on db2"])
        let cursor = try #require(page["next"] as? String)
        reply = try await setup.http.get("/channels/alerts/messages?limit=2&cursor=\(cursor)", token: Self.token)
        page = try #require(reply.json)
        #expect((page["messages"] as? [[String: Any]])?.compactMap { $0["body"] as? String } == ["backup done", "disk full on db1"])
        #expect(page["next"] == nil)
        reply = try await setup.http.get("/channels/alerts/messages?q=backup&since=1h", token: Self.token)
        #expect(((reply.json?["messages"] as? [[String: Any]])?.count) == 1, "\(reply)")
        #expect(try await setup.http.get("/channels/alerts/messages").status == 401)
        #expect(try await setup.http.get("/channels/alerts/messages?limit=0", token: Self.token).status == 422)
        #expect(try await setup.http.get("/channels/alerts/messages?since=soon", token: Self.token).status == 422)
        #expect(try await setup.http.get("/channels/nope/messages", token: Self.token).status == 404)
        #expect(try await setup.http.get("/channels/private/messages", token: Self.token).status == 404, "a channel the ingress is not in")
        #expect(try await setup.http.post("/channels/alerts/messages", token: Self.token, body: "x").status == 405)

        // Without a daemon: the stopped bridge indexed everything; the command reads the database.
        #expect(bridge.stop() == 0)
        #expect(try Self.history(["--search", "backup"], setup: setup).map(\.body) == ["backup done"])

        // A message accepted just before kill -9 is in the archive after it, searchable
        // without a daemon (the command applies the intake log, then indexes).
        bridge = try await setup.startBridge()
        #expect(try await setup.http.post("/channels/alerts", token: Self.token, body: "written before the kill").status == 202)
        kill(bridge.run.process.pid, SIGKILL)
        _ = bridge.run.finish(timeout: 10)
        #expect(try Self.history(["--search", "kill"], setup: setup).map(\.body) == ["written before the kill"])
        await setup.stop()
    }
}

extension JSONDecoder.DateDecodingStrategy {
    /// ISO 8601 with milliseconds, as the archive's JSON writes times.
    static var iso8601withFractionalSeconds: JSONDecoder.DateDecodingStrategy {
        .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 time: \(text)"))
            }
            return date
        }
    }
}
