import Foundation
import IntegrationSupport
import NIOPosix
import TestServers
import Testing
import XMPP

/// `reupload = true` (issue 12) across two real Prosody servers, each with its own upload
/// service: a file alice shares from a.test reaches bob on b.test as a URL on b.test's
/// service, with the same bytes.
@Suite("re-upload across two Prosody servers", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.uploadEnabled), .timeLimit(.minutes(3)))
struct ReuploadIntegrationTests {
    static let limit = UploadServer.limit

    static func server(_ domain: String, users: [String]) async throws -> ProsodyServer {
        try await UploadServer.started(domain: domain, users: users, httpHost: "localhost")
    }

    @Test("alice's file on a.test arrives at bob as a URL on b.test's upload service; the bytes are equal")
    func reuploadToTargetServer() async throws {
        let a = try await Self.server("a.test", users: ["alice", "work"])
        defer { a.shutdown() }
        let b = try await Self.server("b.test", users: ["bob", "home"])
        defer { b.shutdown() }
        // Both servers' certificates are trusted by the bridge and by the test.
        let trust = "\(a.directory)/both-servers.pem"
        let pems = try [a, b].map { try String(contentsOfFile: $0.certificate?.certificateFile ?? "", encoding: .utf8) }
        try pems.joined(separator: "\n").write(toFile: trust, atomically: true, encoding: .utf8)
        var config = try String(
            contentsOfFile: try BridgeConfigFile.write(
                accounts: [("work", "work", a), ("home", "home", b)], in: a.directory,
                rest: """
                    [channels.link]
                    format = "{body}"
                    reupload = true
                    members = [
                      { account = "work", jid = "alice@a.test" },
                      { account = "home", jid = "bob@b.test" },
                    ]
                    """
            ),
            encoding: .utf8
        )
        for server in [a, b] { config = config.replacingOccurrences(of: server.certificate?.certificateFile ?? "-", with: trust) }
        try config.write(toFile: "\(a.directory)/bridge.toml", atomically: true, encoding: .utf8)
        let bridge = try BridgeDaemon.start(config: "\(a.directory)/bridge.toml", in: a.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["work", "home"])
        let alice = try await TestSession.start("alice", on: a)
        let bob = try await TestSession.start("bob", on: b)
        let http = HTTPSClient(
            configuration: .init(tls: TLSConfiguration(additionalTrustRootsFile: trust, useSystemTrustStore: false)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: IntegrationEnvironment.logger("reupload-test")
        )

        let bytes = UploadServer.randomBytes(300_000)
        let source = try await HTTPFileUpload(through: alice.session, using: http, logger: IntegrationEnvironment.logger("reupload-test")).upload(bytes, filename: "photo.jpg", contentType: "image/jpeg")
        #expect(source.hasPrefix("https://localhost:\(a.httpsPort)/"))
        let (body, elements) = RichContent(url: source).outgoing(text: nil)
        var message = Message(type: .chat, to: try JID("work@a.test"), id: "a-photo", body: body)
        message.extensions = elements
        try await alice.session.send(message)

        let received = try #require(await bob.log.waitFor(timeout: .seconds(20)) {
            if case .message(let message, nil) = $0 { return message.body?.hasPrefix("https://") == true }
            return false
        })
        guard case .message(let file, _) = received else { return }
        let copy = try #require(file.body)
        #expect(copy.hasPrefix("https://localhost:\(b.httpsPort)/"), "on bob's server: \(copy); stderr: \(bridge.run.errors.suffix(2000))")
        #expect(copy.hasSuffix("/photo.jpg"))
        #expect(RichContent.parse(file).content.url == copy, "body == OOB URL")
        #expect(try await http.get(url: copy, maxBytes: Self.limit).bodyBytes == bytes)
        await alice.stop()
        await bob.stop()
    }
}
