import Foundation
import IntegrationSupport
import NIOPosix
import TestServers
import Testing
import XMPP

/// `xmpp-bridge send --file` against a real Prosody with `mod_http_file_share` (issue 12):
/// the built binary uploads through the account's XEP-0363 service over our OpenSSL TLS,
/// verified against the test CA, and sends the URL so clients show the file inline.
@Suite("send --file against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.uploadEnabled), .timeLimit(.minutes(3)))
struct SendFileCommandTests {
    static let limit = UploadServer.limit

    /// Prosody whose upload URLs name `localhost` (the CLI has only the system resolver).
    static func server() async throws -> ProsodyServer {
        try await UploadServer.started(users: ["alice", "bob"], httpHost: "localhost")
    }

    @Test("send --file of 1 MB with a caption: bob gets the caption, then body == URL with OOB, and the URL's bytes are the file's")
    func sendOneMegabyte() async throws {
        let server = try await Self.server()
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        let password = try CommandLineTests.write("pw\n", in: server.directory, name: "alice.pw")
        let bytes = UploadServer.randomBytes(1 << 20)
        let path = "\(server.directory)/build.log"
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let run = try CommandLineTests.start(
            ["send", "--file", path, "-m", "last night's build"] + CommandLineTests.accountArguments("alice", on: server, passwordFile: password) + ["bob@example.test"],
            in: server.directory
        )
        #expect(run.finish() == 0, "stderr: \(run.errors)")
        let received = await bob.log.messages(atLeast: 2)
        #expect(received.first?.body == "last night's build")
        let file = try #require(received.dropFirst().first)
        let url = try #require(file.body)
        #expect(url.hasPrefix("https://localhost:\(server.httpsPort)/"), "\(url)")
        #expect(url.hasSuffix("/build.log"))
        #expect(RichContent.parse(file).content.url == url, "body and OOB URL are equal")

        let http = HTTPSClient(
            configuration: .init(tls: TLSConfiguration(additionalTrustRootsFile: server.certificate?.certificateFile, useSystemTrustStore: false)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: IntegrationEnvironment.logger("send-file-test")
        )
        let fetched = try await http.get(url: url, maxBytes: Self.limit)
        #expect(fetched.bodyBytes == bytes)
        await bob.stop()
    }

    @Test("send --lines --max-per-minute 20 with 500 lines: bob gets 20 lines and one digest whose file holds the other 480, in order (issue 24)")
    func floodOfLines() async throws {
        let server = try await Self.server()
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        let password = try CommandLineTests.write("pw\n", in: server.directory, name: "alice.pw")
        let lines = (1...500).map { String(format: "build step %03d ok", $0) }
        let input = try CommandLineTests.write(lines.joined(separator: "\n") + "\n", in: server.directory, name: "make.out")
        let run = try CommandLineTests.start(
            ["send", "--lines", "--max-per-minute", "20"] + CommandLineTests.accountArguments("alice", on: server, passwordFile: password) + ["bob@example.test"],
            stdin: input, in: server.directory
        )
        #expect(run.finish() == 0, "stderr: \(run.errors)")
        let received = await bob.log.messages(atLeast: 21)
        #expect(received.count == 21, "\(received.map { $0.body ?? "" })")
        #expect(received.prefix(20).map { $0.body ?? "" } == Array(lines.prefix(20)))
        let digest = try #require(received.last?.body)
        #expect(digest.hasPrefix("+480 more: build step 021 ok\n"), "\(digest)")
        let url = try #require(digest.split(separator: "\n").last.map(String.init))
        let http = HTTPSClient(
            configuration: .init(tls: TLSConfiguration(additionalTrustRootsFile: server.certificate?.certificateFile, useSystemTrustStore: false)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: IntegrationEnvironment.logger("send-lines-test")
        )
        let file = String(decoding: try await http.get(url: url, maxBytes: Self.limit).bodyBytes, as: UTF8.self)
        #expect(file == "+480 more:\n" + lines.dropFirst(20).joined(separator: "\n"))
        await bob.stop()
    }

    @Test("send --file of a file over the service's limit: exit 8, a clear error, and nothing sent")
    func tooLarge() async throws {
        let server = try await Self.server()
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        let password = try CommandLineTests.write("pw\n", in: server.directory, name: "alice.pw")
        let path = "\(server.directory)/huge.bin"
        try Data(count: Self.limit + 1).write(to: URL(fileURLWithPath: path))
        let missing = "\(server.directory)/no-such-file"

        let run = try CommandLineTests.start(
            ["send", "--file", path, "--file", missing] + CommandLineTests.accountArguments("alice", on: server, passwordFile: password) + ["bob@example.test"],
            in: server.directory
        )
        #expect(run.finish() == 8)
        #expect(run.errors.contains("huge.bin: not sent"), "stderr: \(run.errors)")
        #expect(run.errors.contains("no-such-file: not sent"), "stderr: \(run.errors)")
        // A marker sent after it arrives alone: nothing of the refused files went out.
        let marker = try CommandLineTests.start(
            ["send", "-m", "marker"] + CommandLineTests.accountArguments("alice", on: server, passwordFile: password) + ["bob@example.test"],
            in: server.directory
        )
        #expect(marker.finish() == 0)
        #expect(await Received.message(bob.log, body: "marker") != nil)
        #expect(await Received.bodies(bob.log) == ["marker"])
        await bob.stop()
    }
}
