import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP
import XMPPMapping

/// Gateway mode (issue 23), what crosses puppets besides text: rich content (issue 12)
/// through the id map, and the contact's vCard and avatar.
extension GatewayIntegrationTests {
    @Test("rich content crosses puppets through the id map: bob's correction reaches alice as a correction of her copy, alice's receipt and reply reach bob under his own id, and alice's OMEMO message is not relayed but noticed from the puppet")
    func richContentThroughPuppets() async throws {
        let scenario = try await Self.start(contacts: ["alice", "bob"])
        defer { scenario.shutdown() }
        let (bridge, alice, bob) = (scenario.bridge, try scenario.contact("alice"), try scenario.contact("bob"))
        let home = try JID("home@example.test")
        let puppet = try GatewayFixture.puppet("bob@example.test", on: Self.component)
        var original = Message(type: .chat, to: home, id: "b-original", body: "original")
        original.extensions = MessageReceipt.requests
        try await bob.session.send(original)
        guard let copy = await Received.message(alice.log, body: "original"), let copyID = copy.id else {
            Issue.record("no copy; stderr: \(bridge.run.errors.suffix(3000))")
            return
        }
        #expect(copy.extensions.contains { $0.name == "request" && $0.namespace == "urn:xmpp:receipts" }, "bob asked for a receipt: so does his copy")

        try await bob.session.send(Message.rich(to: home, id: "b-fix", "corrected", RichContent(replaceID: "b-original")))
        let correction = await Received.message(alice.log, body: "corrected")
        #expect(correction.map { RichContent.parse($0).content.replaceID } == copyID, "the correction names alice's copy")

        try await alice.session.send(Message.rich(to: puppet, id: "a-receipt", nil, RichContent(receiptFor: copyID)))
        let receipt = await bob.log.waitFor(timeout: .seconds(15)) {
            if case .message(let message, nil) = $0 { return MessageReceipt.of(message)?.id == "b-original" }
            return false
        }
        #expect(receipt != nil, "bob gets the receipt under his own id; stderr: \(bridge.run.errors.suffix(3000))")

        try await alice.session.send(Message.rich(to: puppet, id: "a-reply", "my answer", RichContent(replyTo: copyID)))
        let reply = await bob.log.waitFor(timeout: .seconds(15)) {
            if case .message(let message, nil) = $0 { return RichContent.parse(message).content.replyTo == "b-original" }
            return false
        }
        #expect(reply != nil, "bob gets the reply to his own message")

        let omemo = RichMessageIntegrationTests.element("encrypted", "eu.siacs.conversations.axolotl", children: [RichMessageIntegrationTests.element("payload", "eu.siacs.conversations.axolotl", text: "c2VjcmV0")])
        try await alice.session.send(Message.rich(to: puppet, id: "a-omemo", "I sent you an OMEMO encrypted message", RichContent(), extra: [omemo]))
        let notice = await alice.log.waitFor(timeout: .seconds(15)) {
            if case .message(let message, nil) = $0 { return message.body?.contains("cannot relay messages encrypted with OMEMO") == true }
            return false
        }
        if case .message(let message, _) = notice {
            #expect(message.from?.bare == puppet, "the notice comes from the puppet")
        } else {
            Issue.record("no notice; stderr: \(bridge.run.errors.suffix(3000))")
        }
        try await alice.session.send(Message(type: .chat, to: puppet, id: "a-marker", body: "marker"))
        #expect(await Received.message(bob.log, body: "marker") != nil)
        #expect(!(await Received.bodies(bob.log)).contains { $0.contains("OMEMO") }, "the encrypted message's fallback text never reaches bob")
        #expect(bridge.stop() == 0)
        await alice.stop()
        await bob.stop()
    }

    @Test("files, reactions, retractions, displayed markers and headlines cross puppets: bob's file and headline reach alice from his puppet, alice's file reaches bob, her reaction and marker name bob's own message, and his retraction names her copy")
    func moreRichContentThroughPuppets() async throws {
        let scenario = try await Self.start(contacts: ["alice", "bob"])
        defer { scenario.shutdown() }
        let (bridge, alice, bob) = (scenario.bridge, try scenario.contact("alice"), try scenario.contact("bob"))
        let home = try JID("home@example.test")
        let puppet = try GatewayFixture.puppet("bob@example.test", on: Self.component)
        func fromPuppet(_ predicate: @escaping @Sendable (Message) -> Bool) async -> Message? {
            await Received.message(alice.log, timeout: .seconds(15)) { $0.from?.bare == puppet && predicate($0) }
        }
        func atBob(_ predicate: @escaping @Sendable (Message) -> Bool) async -> Message? {
            await Received.message(bob.log, timeout: .seconds(15), where: predicate)
        }
        let stderr = { bridge.run.errors.suffix(3000) }

        let bobsFile = "https://upload.example.test/share/b1/plan%20v2.pdf"
        try await bob.session.send(Message.rich(to: home, id: "b-file", bobsFile, RichContent(url: bobsFile)))
        let file = await fromPuppet { $0.body == bobsFile }
        #expect(file.map { RichContent.parse($0).content.url } == bobsFile, "bob's file reaches alice as a file; stderr: \(stderr())")

        let alicesFile = "https://upload.example.test/share/a1/photo.jpg"
        try await alice.session.send(Message.rich(to: puppet, id: "a-file", alicesFile, RichContent(url: alicesFile)))
        let sent = await atBob { $0.body == alicesFile }
        #expect(sent.map { RichContent.parse($0).content.url } == alicesFile, "alice's file reaches bob as a file; stderr: \(stderr())")

        try await bob.session.send(Message(type: .chat, to: home, id: "b-react", body: "react to this"))
        guard let copy = await fromPuppet({ $0.body == "react to this" }), let copyID = copy.id else {
            Issue.record("no copy; stderr: \(stderr())")
            return
        }
        try await alice.session.send(Message.rich(to: puppet, id: "a-reaction", nil, RichContent(reactionTo: copyID, reactions: ["👍"])))
        let reaction = await atBob { RichContent.parse($0).content.reactionTo == "b-react" }
        #expect(reaction.map { RichContent.parse($0).content.reactions } == ["👍"], "bob gets alice's reaction to his own message; stderr: \(stderr())")

        try await alice.session.send(Message.rich(to: puppet, id: "a-displayed", nil, RichContent(receiptFor: copyID, receiptDisplayed: true)))
        // (A delivery receipt for the same message may come first: alice's client sends one.)
        let marker = await atBob { MessageReceipt.of($0) == MessageReceipt(id: "b-react", displayed: true) }
        #expect(marker != nil, "bob gets alice's displayed marker for his own message; stderr: \(stderr())")

        try await bob.session.send(Message.rich(to: home, id: "b-retract", nil, RichContent(retractID: "b-react")))
        let retraction = await fromPuppet { RichContent.parse($0).content.retractID != nil }
        #expect(retraction.map { RichContent.parse($0).content.retractID } == copyID, "the retraction names alice's copy; stderr: \(stderr())")

        try await bob.session.send(Message(type: .headline, to: home, id: "b-headline", body: "disk almost full"))
        let headline = await fromPuppet { $0.body == "disk almost full" }
        #expect(headline?.type == .headline, "a headline stays a headline; stderr: \(stderr())")
        #expect(bridge.stop() == 0)
        await alice.stop()
        await bob.stop()
    }

    @Test("a puppet serves its contact's vCard (XEP-0054) as the linked account reads it, and shows the contact's avatar hash in its presence (XEP-0153), the SHA-1 of that vCard's photo; a contact without one gives none (an empty vCard or item-not-found)")
    func vCardThroughPuppet() async throws {
        let scenario = try await Self.start(contacts: ["bob"])
        defer { scenario.shutdown() }
        let (server, bridge, bob) = (scenario.server, scenario.bridge, try scenario.contact("bob"))
        let png = ProfileIntegrationTests.png
        let avatar = try Avatar(bytes: png)
        func element(_ name: String, _ namespace: String = "vcard-temp", _ children: [XMLElement] = [], _ text: String? = nil) -> XMLElement {
            RichMessageIntegrationTests.element(name, namespace, children: children, text: text)
        }
        let photo = element("PHOTO", "vcard-temp", [element("TYPE", "vcard-temp", [], "image/png"), element("BINVAL", "vcard-temp", [], Data(png).base64EncodedString())])
        let card = element("vCard", "vcard-temp", [element("FN", "vcard-temp", [], "Bob Builder"), element("NICKNAME", "vcard-temp", [], "bobby"), photo])
        _ = try await bob.session.request(IQ(type: .set, id: "v1", payload: card))
        let alice = try await TestSession.start("alice", on: server, policy: .acceptAll)
        let bobPuppet = try GatewayFixture.puppet("bob@example.test", on: Self.component)
        try await alice.session.subscribe(to: bobPuppet)
        await bob.session.setPresenceExtensions([PhotoUpdate.element(hash: avatar.id)])
        try await bob.session.setPresence(status: "with avatar")
        let shown = await alice.log.waitFor(timeout: .seconds(15)) { [bobPuppet] in
            guard case .presence(let presence, _) = $0, presence.from?.bare == bobPuppet, presence.status == "with avatar" else { return false }
            return presence.extensions.contains { $0.name == "x" && $0.namespace == "vcard-temp:x:update" && $0.firstChild(named: "photo", namespace: "vcard-temp:x:update")?.text == avatar.id }
        }
        #expect(shown != nil, "the puppet's presence carries bob's photo hash; stderr: \(bridge.run.errors.suffix(2000))")

        let answer = try await alice.session.request(
            IQ(type: .get, id: "v2", to: bobPuppet, payload: XMLElement(name: "vCard", namespace: "vcard-temp")),
            timeout: .seconds(20)
        )
        #expect(answer.payload?.firstChild(named: "FN")?.text == "Bob Builder", "\(String(describing: answer.payload)); stderr: \(bridge.run.errors.suffix(2000))")
        // The photo the puppet serves is the one the hash names.
        let served = answer.payload?.firstChild(named: "PHOTO")?.firstChild(named: "BINVAL")?.text
        let bytes = served.flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }.map { Array($0) }
        #expect(try bytes.map { try Avatar(bytes: $0).id } == avatar.id, "photo served: \(served?.prefix(80) ?? "none")")
        do {
            let none = try await alice.session.request(
                IQ(type: .get, id: "v3", to: try GatewayFixture.puppet("carol@example.test", on: Self.component), payload: XMLElement(name: "vCard", namespace: "vcard-temp")),
                timeout: .seconds(20)
            )
            #expect(none.payload?.firstChild(named: "FN") == nil, "\(String(describing: none.payload))")
        } catch {
            #expect("\(error)".contains("item-not-found"), "\(error)")
        }
        #expect(bridge.stop() == 0)
        await alice.stop()
        await bob.stop()
    }
}
