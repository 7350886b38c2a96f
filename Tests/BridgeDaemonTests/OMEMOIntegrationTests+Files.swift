import Foundation
import IntegrationSupport
import NIOPosix
import OMEMO
import TestServers
import TestSupport
import Testing
import XMPP

/// A file the phone shares encrypted (XEP-0454, an `aesgcm://` link inside its OMEMO
/// message) reaching a target that gets messages in the clear (issue 41 item 3): with
/// `reupload = true` the bridge fetches it, decrypts it and shares it from the target
/// account's upload service; the target's link opens to the phone's file. A target that gets
/// the message encrypted gets the encrypted bytes uploaded again, under the same key.
extension OMEMOIntegrationTests {
    /// A Prosody with an upload service, the bridge's `home` (and `accounts`) as OMEMO
    /// devices with `members` in a channel with `reupload = true`, and `subscribed` in
    /// home's roster both ways.
    static func fileScenario(accounts: [String], others: [String], members: String, subscribed: [String]) async throws -> DaemonScenario {
        var options = ProsodyServer.Options()
        options.fileShareSizeLimit = UploadServer.limit
        options.fileShareHTTPHost = "localhost"
        return try await DaemonScenario.start(
            accounts: accounts, others: others, accountSettings: "omemo = true",
            rest: """
                [channels.link]
                format = "{body}"
                reupload = true
                members = [
                \(members)
                ]
                """,
            server: options,
            prepare: { server in
                for user in subscribed { try await MirrorSupport.subscribeBothWays(user, "home", on: server) }
            }
        )
    }

    /// An HTTPS client that trusts `scenario`'s server.
    static func https(for scenario: DaemonScenario) -> HTTPSClient {
        HTTPSClient(
            configuration: .init(tls: TLSConfiguration(additionalTrustRootsFile: scenario.server.certificate?.certificateFile, useSystemTrustStore: false)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: IntegrationEnvironment.logger("aesgcm-test")
        )
    }

    /// A phone's upload of `file` as a phone makes it: sealed under a new key, the sealed
    /// bytes put on the server through `session`, the key only in the link.
    static func sealedUpload(_ file: [UInt8], named name: String, through session: TestSession, http: HTTPSClient) async throws -> (sealed: [UInt8], put: String, link: EncryptedFileLink) {
        let (sealed, draft) = try EncryptedFileLink.seal(file, for: URL(string: "https://localhost/draft")!)
        let put = try await HTTPFileUpload(through: session.session, using: http, logger: IntegrationEnvironment.logger("aesgcm-test"))
            .upload(sealed, filename: name, contentType: "application/octet-stream")
        return (sealed, put, draft.moved(to: try #require(URL(string: put))))
    }

    @Test("an aesgcm:// file from the phone reaches a target without encryption decrypted, from the target account's upload service")
    func encryptedFileDecryptedForPlainTarget() async throws {
        let scenario = try await Self.fileScenario(
            accounts: ["home", "work"], others: ["bob", "alice"],
            members: """
                  { account = "home", jid = "bob@example.test", encryption = "required", direction = "in" },
                  { account = "work", jid = "alice@example.test", encryption = "none", direction = "out" },
                """,
            subscribed: ["bob"]
        )
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let alice = try await TestSession.start("alice", on: scenario.server)
        let http = Self.https(for: scenario)
        let file = UploadServer.randomBytes(200_000)
        let (_, put, sealedLink) = try await Self.sealedUpload(file, named: "scan.pdf", through: alice, http: http)
        let link = sealedLink.text
        #expect(link.hasPrefix("aesgcm://localhost:"), "\(link)")
        // Fetched as it is, the upload is no use to the target: it is the sealed bytes.
        #expect(try await http.get(url: put, maxBytes: UploadServer.limit).bodyBytes != file)

        _ = await eventually(timeout: .seconds(20)) { scenario.bridge.logLines.contains { $0.contains("account=home") && $0.contains("OMEMO device added") } }
        try await phone.refresh("home@example.test")
        try phone.send(link, to: "home@example.test")
        let arrived = try #require(await alice.log.waitFor(timeout: .seconds(30)) {
            if case .message(let message, nil) = $0 { return message.body?.hasPrefix("https://") == true }
            return false
        }, "phone: \(phone.events.map(\.fields)) \(phone.errors.suffix(1500)) bridge: \(scenario.bridge.run.errors.suffix(3000))")
        guard case .message(let message, _) = arrived else { return }
        let copy = try #require(message.body)
        #expect(copy != put, "a new upload, not the phone's")
        #expect(copy.hasSuffix("/scan.pdf"))
        #expect(RichContent.parse(message).content.url == copy, "body == OOB URL")
        #expect(try await http.get(url: copy, maxBytes: UploadServer.limit).bodyBytes == file, "the target's link opens to the phone's file")
        #expect(scenario.bridge.logLines.contains { $0.contains("encrypted file decrypted and uploaded again") })
        await alice.stop()
    }

    @Test("an aesgcm:// file from the phone to another OMEMO contact (encryption omemo, no session yet): uploaded again as it is, the link keeps its key")
    func encryptedFileKeptForEncryptedTarget() async throws {
        let scenario = try await Self.fileScenario(
            accounts: ["home"], others: ["bob", "carol"],
            members: """
                  { account = "home", jid = "bob@example.test", encryption = "required", direction = "in" },
                  { account = "home", jid = "carol@example.test", encryption = "omemo", direction = "out" },
                """,
            subscribed: ["bob", "carol"]
        )
        defer { scenario.shutdown() }
        let bob = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { bob.stop() }
        let carol = try await OMEMOPhone.start("carol", on: scenario.server)
        defer { carol.stop() }
        let http = Self.https(for: scenario)
        let uploader = try await TestSession.start("bob", on: scenario.server)
        let file = UploadServer.randomBytes(100_000)
        let (sealed, put, sealedLink) = try await Self.sealedUpload(file, named: "voice.m4a", through: uploader, http: http)
        await uploader.stop()
        let link = sealedLink.text

        _ = await eventually(timeout: .seconds(20)) { scenario.bridge.logLines.contains { $0.contains("OMEMO device added") } }
        try await bob.refresh("home@example.test")
        try bob.send(link, to: "home@example.test")
        let arrived = try #require(
            await carol.waitFor(timeout: .seconds(30)) { $0.body?.hasPrefix("aesgcm://") == true },
            "carol: \(carol.events.map(\.fields)) bridge: \(scenario.bridge.run.errors.suffix(3000))"
        )
        #expect(arrived.encrypted, "the link reaches carol inside OMEMO")
        let copy = try #require(arrived.body.flatMap(EncryptedFileLink.init))
        #expect(copy.url.absoluteString != put, "a new upload, not the phone's")
        #expect(copy.key == sealedLink.key && copy.iv == sealedLink.iv, "the same key")
        let downloaded = try await http.get(url: copy.url.absoluteString, maxBytes: UploadServer.limit).bodyBytes
        #expect(downloaded == sealed, "the encrypted bytes, as they were")
        #expect(try copy.open(downloaded) == file)
    }
}
