import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import TransportCore
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// The account's nick and avatar with the real daemon and a real Prosody (issue 25):
/// published at login (vCard with photo, PEP avatar and nick), once; read back by
/// `xmpp-bridge vcard` and by slixmpp; carried in the bridge's messages (XEP-0172); and a
/// contact's XEP-0172 nick or vCard nickname standing in for a missing roster name.
@Suite("nick and avatar against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(3)))
struct ProfileIntegrationTests {
    /// A 3×2 PNG, and its SHA-1 as Python's hashlib computes it.
    static let png = Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==")!)
    static let pngSHA1 = "5e4f1cab6e8994cef0cf614bcfd9b2eef5e18b85"
    static let home = try! JID("home@example.test")

    static func vCard(nick: String) -> XMLElement {
        var card = XMLElement(name: "vCard", namespace: "vcard-temp")
        var field = XMLElement(name: "NICKNAME", namespace: "vcard-temp")
        field.append(text: nick)
        card.append(field)
        return card
    }

    @Test("nick and avatar are published at login and not again after a restart; vcard and slixmpp read them; PEP has the avatar; messages carry the nick; a contact's XEP-0172 nick or vCard nickname is its {nick}")
    func publishedAndRead() async throws {
        let server = try await ProsodyServer.started(accounts: [("bob", "pw"), ("home", "pw"), ("carol", "pw"), ("dave", "pw")])
        defer { server.shutdown() }
        // carol has a vCard nickname and is in home's roster without a name.
        let carol = try await TestSession.start("carol", on: server)
        _ = try await carol.session.request(IQ(type: .set, id: "card-1", payload: Self.vCard(nick: "Caz")))
        let setup = try await TestSession.start("home", on: server)
        try await setup.session.setContact(try JID("carol@example.test"))
        await setup.stop()
        let bob = try await TestSession.start("bob", on: server)
        let dave = try await TestSession.start("dave", on: server)
        try Data(Self.png).write(to: URL(fileURLWithPath: "\(server.directory)/bridge.png"))
        var config = try BridgeConfigFile.write(
            for: server, accounts: ["home"],
            rest: """
                [channels.link]
                format = "{nick}: {body}"
                members = [
                  { account = "home", jid = "carol@example.test", direction = "in" },
                  { account = "home", jid = "dave@example.test", direction = "in" },
                  { account = "home", jid = "bob@example.test", direction = "out" },
                ]
                """
        )
        let text = try String(contentsOfFile: config, encoding: .utf8)
            .replacingOccurrences(of: "[accounts.home]\n", with: "[accounts.home]\nnick = \"Ops bridge\"\navatar = \"bridge.png\"\n")
        try text.write(toFile: config, atomically: true, encoding: .utf8)
        config = (config as NSString).lastPathComponent

        var bridge = try BridgeDaemon.start(config: "\(server.directory)/\(config)", in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["home"])
        #expect(await bridge.waitForLog { $0.contains("nick and avatar published") }, "stderr: \(bridge.run.errors.suffix(2000))")

        // `xmpp-bridge vcard` (its own login, beside the daemon's).
        let shown = try MirrorSupport.command(["vcard", "home", "--json", "--config", "\(server.directory)/\(config)"], in: server.directory)
        #expect(shown.status == 0, "\(shown.errors)")
        let ours = try JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? [String: Any]
        #expect(ours?["nick"] as? String == "Ops bridge" && ours?["fullName"] as? String == "Ops bridge")
        #expect(ours?["avatarType"] as? String == "image/png" && ours?["avatarHash"] as? String == Self.pngSHA1)
        let carolsCard = try MirrorSupport.command(["vcard", "home", "carol@example.test", "--config", "\(server.directory)/\(config)"], in: server.directory)
        #expect(carolsCard.output.contains("nick       Caz"), "\(carolsCard.output) \(carolsCard.errors)")

        // slixmpp, as bob, reads the same vCard.
        if let python = ProcessInfo.processInfo.environment["XMPP_BRIDGE_TEST_PYTHON"] {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Peers/read_vcard.py").standardized.path
            let peer = try Subprocess.run(
                python, [script, "--jid", "bob@example.test", "--password", "pw", "--port", "\(server.c2sPort)", "--ca-file", server.certificate?.certificateFile ?? "", "home@example.test"]
            )
            let line = peer.split(separator: "\n").last.map(String.init) ?? ""
            let read = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(read?["nick"] as? String == "Ops bridge" && read?["fullName"] as? String == "Ops bridge", "slixmpp: \(peer)")
            #expect(read?["photoType"] as? String == "image/png" && read?["photoHash"] as? String == Self.pngSHA1)
        } else {
            #expect(!IntegrationEnvironment.isCI, "XMPP_BRIDGE_TEST_PYTHON (a Python with slixmpp; scripts/test.sh makes one) is missing")
        }

        // PEP (XEP-0084): the metadata names the avatar, as the account itself reads it.
        let own = try await TestSession.start("home", on: server)
        var items = XMLElement(name: "items", namespace: "http://jabber.org/protocol/pubsub", attributes: [XMLAttribute(name: "node", value: "urn:xmpp:avatar:metadata")])
        items.children = []
        var pubsub = XMLElement(name: "pubsub", namespace: "http://jabber.org/protocol/pubsub")
        pubsub.append(items)
        let metadata = try await own.session.request(IQ(type: .get, id: "pep-1", to: Self.home, payload: pubsub))
        let info = metadata.payload?.firstChild(named: "items")?.firstChild(named: "item")?.firstChild(named: "metadata")?.firstChild(named: "info")
        #expect(info?[attribute: "id"] == Self.pngSHA1 && info?[attribute: "type"] == "image/png" && info?[attribute: "width"] == "3")
        await own.stop()

        // Messages: the bridge's carry its nick; carol's {nick} is her vCard nickname, dave's his XEP-0172 nick.
        try await carol.session.send(Message(type: .chat, to: Self.home, id: "c-1", body: "hello from carol"))
        var fromDave = Message(type: .chat, to: Self.home, id: "d-1", body: "hello from dave")
        fromDave.extensions.append(try #require(OwnProfile(nick: "Davey").nickElement))
        try await dave.session.send(fromDave)
        let first = await Received.message(bob.log, body: "Caz: hello from carol", timeout: .seconds(15))
        #expect(first.map { OwnProfile.nick(in: $0.extensions) } == "Ops bridge", "stderr: \(bridge.run.errors.suffix(2000))")
        #expect(await Received.message(bob.log, body: "Davey: hello from dave", timeout: .seconds(15)) != nil)

        // A restart with the same nick and avatar publishes nothing.
        #expect(bridge.stop() == 0)
        bridge = try BridgeDaemon.start(config: "\(server.directory)/\(config)", in: server.directory)
        try await bridge.waitOnline(["home"])
        #expect(await bridge.waitForLog { $0.contains("nick and avatar unchanged") }, "stderr: \(bridge.run.errors.suffix(2000))")
        #expect(!bridge.logLines.contains { $0.contains("nick and avatar published") })
        #expect(bridge.stop() == 0)
        await carol.stop()
        await bob.stop()
        await dave.stop()
    }
}
