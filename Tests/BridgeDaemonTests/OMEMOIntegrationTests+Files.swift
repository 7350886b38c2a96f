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
    @Test("an aesgcm:// file from the phone reaches a target without encryption decrypted, from the target account's upload service")
    func encryptedFileDecryptedForPlainTarget() async throws {
        var options = ProsodyServer.Options()
        options.fileShareSizeLimit = UploadServer.limit
        options.fileShareHTTPHost = "localhost"
        let scenario = try await DaemonScenario.start(
            accounts: ["home", "work"], others: ["bob", "alice"], accountSettings: "omemo = true",
            rest: """
                [channels.link]
                format = "{body}"
                reupload = true
                members = [
                  { account = "home", jid = "bob@example.test", encryption = "required", direction = "in" },
                  { account = "work", jid = "alice@example.test", encryption = "none", direction = "out" },
                ]
                """,
            server: options,
            prepare: { server in try await MirrorSupport.subscribeBothWays("bob", "home", on: server) }
        )
        defer { scenario.shutdown() }
        let phone = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { phone.stop() }
        let alice = try await TestSession.start("alice", on: scenario.server)
        let http = HTTPSClient(
            configuration: .init(tls: TLSConfiguration(additionalTrustRootsFile: scenario.server.certificate?.certificateFile, useSystemTrustStore: false)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: IntegrationEnvironment.logger("aesgcm-test")
        )

        // The phone's upload, as a phone makes it: the file sealed under a new key, the
        // sealed bytes put on its server, the key only in the link.
        let file = UploadServer.randomBytes(200_000)
        let (sealed, draft) = try EncryptedFileLink.seal(file, for: URL(string: "https://localhost/draft")!)
        let put = try await HTTPFileUpload(through: alice.session, using: http, logger: IntegrationEnvironment.logger("aesgcm-test"))
            .upload(sealed, filename: "scan.pdf", contentType: "application/octet-stream")
        let link = draft.moved(to: try #require(URL(string: put))).text
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
        var options = ProsodyServer.Options()
        options.fileShareSizeLimit = UploadServer.limit
        options.fileShareHTTPHost = "localhost"
        let scenario = try await DaemonScenario.start(
            accounts: ["home"], others: ["bob", "carol"], accountSettings: "omemo = true",
            rest: """
                [channels.link]
                format = "{body}"
                reupload = true
                members = [
                  { account = "home", jid = "bob@example.test", encryption = "required", direction = "in" },
                  { account = "home", jid = "carol@example.test", encryption = "omemo", direction = "out" },
                ]
                """,
            server: options,
            prepare: { server in
                try await MirrorSupport.subscribeBothWays("bob", "home", on: server)
                try await MirrorSupport.subscribeBothWays("carol", "home", on: server)
            }
        )
        defer { scenario.shutdown() }
        let bob = try await OMEMOPhone.start("bob", on: scenario.server)
        defer { bob.stop() }
        let carol = try await OMEMOPhone.start("carol", on: scenario.server)
        defer { carol.stop() }
        let http = HTTPSClient(
            configuration: .init(tls: TLSConfiguration(additionalTrustRootsFile: scenario.server.certificate?.certificateFile, useSystemTrustStore: false)),
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: IntegrationEnvironment.logger("aesgcm-test")
        )
        let uploader = try await TestSession.start("bob", on: scenario.server)
        let file = UploadServer.randomBytes(100_000)
        let (sealed, draft) = try EncryptedFileLink.seal(file, for: URL(string: "https://localhost/draft")!)
        let put = try await HTTPFileUpload(through: uploader.session, using: http, logger: IntegrationEnvironment.logger("aesgcm-test"))
            .upload(sealed, filename: "voice.m4a", contentType: "application/octet-stream")
        await uploader.stop()
        let link = draft.moved(to: try #require(URL(string: put))).text

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
        #expect(copy.key == draft.key && copy.iv == draft.iv, "the same key")
        let downloaded = try await http.get(url: copy.url.absoluteString, maxBytes: UploadServer.limit).bodyBytes
        #expect(downloaded == sealed, "the encrypted bytes, as they were")
        #expect(try copy.open(downloaded) == file)
    }
}
