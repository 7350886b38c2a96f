import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP

/// Rich messages across a 1:1 link against a real Prosody (issue 12): files, corrections,
/// replies, reactions, retractions, receipts and encrypted messages, each checked on the
/// copy the other side holds (its own ids), with real clients on both ends.
@Suite("Rich messages across the bridge", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct RichMessageIntegrationTests {
    static let link = """
        [channels.link]
        format = "{body}"
        members = [
          { account = "work", jid = "alice@example.test", direction = "inout" },
          { account = "home", jid = "bob@example.test", direction = "inout" },
        ]
        """

    /// A running link: Prosody, the bridge, alice (writes to work) and bob (writes to home).
    struct Link {
        let server: ProsodyServer
        let bridge: BridgeDaemon
        let alice: TestSession
        let bob: TestSession

        static func start(rest: String = RichMessageIntegrationTests.link) async throws -> Link {
            let server = try await ProsodyServer.started(accounts: ["alice", "bob", "work", "home"].map { ($0, "pw") })
            let config = try BridgeConfigFile.write(for: server, accounts: ["work", "home"], rest: rest)
            let bridge = try BridgeDaemon.start(config: config, in: server.directory)
            try await bridge.waitOnline(["work", "home"])
            return Link(server: server, bridge: bridge, alice: try await TestSession.start("alice", on: server), bob: try await TestSession.start("bob", on: server))
        }

        func stop() async {
            await self.alice.stop()
            await self.bob.stop()
            self.bridge.terminate()
            self.server.shutdown()
        }

        /// alice writes to the bridge's `work` account.
        func aliceSends(_ message: Message) async throws {
            var message = message
            message.header.to = try JID("work@example.test")
            try await self.alice.session.send(message)
        }

        func bobSends(_ message: Message) async throws {
            var message = message
            message.header.to = try JID("home@example.test")
            try await self.bob.session.send(message)
        }
    }

    /// The first message in `log` that satisfies `predicate`.
    static func received(_ log: EventLog, _ predicate: @escaping @Sendable (Message) -> Bool) async -> Message? {
        let event = await log.waitFor(timeout: .seconds(10)) {
            if case .message(let message, nil) = $0 { return predicate(message) }
            return false
        }
        if case .message(let message, _) = event { return message }
        return nil
    }

    static func message(_ body: String?, id: String, _ extensions: [XMLElement] = []) -> Message {
        var message = Message(type: .chat, id: id, body: body)
        message.extensions = extensions
        return message
    }

    static func element(_ name: String, _ namespace: String, _ attributes: [String: String] = [:], children: [XMLElement] = [], text: String? = nil) -> XMLElement {
        var element = XMLElement(name: name, namespace: namespace, attributes: attributes.sorted { $0.key < $1.key }.map { XMLAttribute(name: $0.key, value: $0.value) })
        for child in children { element.append(child) }
        if let text { element.append(text: text) }
        return element
    }

    static func oob(_ url: String) -> XMLElement {
        Self.element("x", "jabber:x:oob", children: [Self.element("url", "jabber:x:oob", text: url)])
    }

    @Test("a file with OOB arrives as body == URL plus OOB; its caption comes first as its own message")
    func fileWithCaption() async throws {
        let link = try await Link.start()
        let url = "https://upload.example.test/share/4f2a/cat%20photo.jpg"
        // Body equal to the URL: a file without caption.
        try await link.aliceSends(Self.message(url, id: "a-file", [Self.oob(url)]))
        let file = await Self.received(link.bob.log) { $0.body == url }
        #expect(file.map(RichContent.parse)?.content.url == url)
        // A caption in the body besides the OOB URL (as Gajim sends it): two messages.
        try await link.aliceSends(Self.message("look at this", id: "a-captioned", [Self.oob(url)]))
        let caption = await Self.received(link.bob.log) { $0.body == "look at this" }
        #expect(caption != nil)
        #expect(caption.map(RichContent.parse)?.content.url == nil, "the caption carries no OOB")
        // A body that is only an upload URL, without OOB, becomes a file too.
        let bare = "https://upload.example.test/share/77/report.pdf"
        try await link.aliceSends(Self.message(bare, id: "a-bare"))
        let bareFile = await Self.received(link.bob.log) { $0.body == bare && RichContent.parse($0).content.url == bare }
        #expect(bareFile != nil)
        let bodies = await Received.bodies(link.bob.log)
        #expect(bodies == [url, "look at this", url, bare], "in order, nothing else: \(bodies)")
        await link.stop()
    }

    @Test("correct, reply to, react to and retract a relayed message: each side sees the operation on its own copy")
    func operationsOnCopies() async throws {
        let link = try await Link.start()
        try await link.aliceSends(Self.message("helo bob", id: "a-1"))
        let copy = try #require(await Self.received(link.bob.log) { $0.body == "helo bob" })
        let copyID = try #require(copy.id)
        #expect(copyID != "a-1", "bob's copy has the bridge's own id")

        // alice corrects her message: bob's copy is corrected.
        try await link.aliceSends(Self.message("hello bob", id: "a-2", [Self.element("replace", "urn:xmpp:message-correct:0", ["id": "a-1"])]))
        let correction = await Self.received(link.bob.log) { $0.body == "hello bob" }
        #expect(correction.map(RichContent.parse)?.content.replaceID == copyID)

        // bob replies to his copy, with a quoted fallback: alice's reply points to her own id.
        let quote = "> helo bob\n"
        try await link.bobSends(
            Self.message(
                quote + "hi alice", id: "b-1",
                [
                    Self.element("reply", "urn:xmpp:reply:0", ["id": copyID, "to": "home@example.test"]),
                    Self.element("fallback", "urn:xmpp:fallback:0", ["for": "urn:xmpp:reply:0"], children: [
                        Self.element("body", "urn:xmpp:fallback:0", ["start": "0", "end": "\(quote.unicodeScalars.count)"])
                    ]),
                ]
            )
        )
        let reply = try #require(await Self.received(link.alice.log) { $0.body?.hasSuffix("hi alice") == true })
        let parsed = RichContent.parse(reply)
        #expect(parsed.content.replyTo == "a-1")
        #expect(parsed.content.replyFallback == quote)
        #expect(parsed.text == "hi alice", "the quote is marked as fallback")

        // bob reacts to his copy: alice sees the reaction on her message.
        try await link.bobSends(
            Self.message(nil, id: "b-2", [Self.element("reactions", "urn:xmpp:reactions:0", ["id": copyID], children: [Self.element("reaction", "urn:xmpp:reactions:0", text: "👍")])])
        )
        let reaction = await Self.received(link.alice.log) { RichContent.parse($0).content.reactionTo != nil }
        #expect(reaction.map(RichContent.parse)?.content.reactionTo == "a-1")
        #expect(reaction.map(RichContent.parse)?.content.reactions == ["👍"])
        #expect(reaction?.body == nil, "a reaction has no body")

        // alice retracts her message: bob's copy is retracted.
        try await link.aliceSends(
            Self.message(
                "This person attempted to retract a previous message, but it's unsupported by your client.", id: "a-3",
                [Self.element("retract", "urn:xmpp:message-retract:1", ["id": "a-1"])]
            )
        )
        let retraction = await Self.received(link.bob.log) { RichContent.parse($0).content.retractID != nil }
        #expect(retraction.map(RichContent.parse)?.content.retractID == copyID)

        // A correction of a message the bridge never relayed is a new message, marked.
        try await link.aliceSends(Self.message("fixed", id: "a-4", [Self.element("replace", "urn:xmpp:message-correct:0", ["id": "never-seen"])]))
        let unknown = await Self.received(link.bob.log) { $0.body == "[correction] fixed" }
        #expect(unknown.map(RichContent.parse)?.content.replaceID == nil)
        await link.stop()
    }

    @Test("a receipt and a displayed marker from bob reach alice with alice's original id")
    func receiptsPassedBack() async throws {
        let link = try await Link.start()
        try await link.aliceSends(Self.message("are you there?", id: "a-receipt", MessageReceipt.requests))
        let copy = try #require(await Self.received(link.bob.log) { $0.body == "are you there?" })
        let copyID = try #require(copy.id)
        try await link.bobSends(Self.message(nil, id: "b-r1", [Self.element("received", "urn:xmpp:receipts", ["id": copyID])]))
        let receipt = await Self.received(link.alice.log) { MessageReceipt.of($0) != nil }
        #expect(receipt.flatMap(MessageReceipt.of) == MessageReceipt(id: "a-receipt", displayed: false))
        try await link.bobSends(Self.message(nil, id: "b-r2", [Self.element("displayed", "urn:xmpp:chat-markers:0", ["id": copyID])]))
        let marker = await Self.received(link.alice.log) { MessageReceipt.of($0)?.displayed == true }
        #expect(marker.flatMap(MessageReceipt.of) == MessageReceipt(id: "a-receipt", displayed: true))
        // After the receipts went back, bob's reaction to his copy still lands on alice's message.
        try await link.bobSends(
            Self.message(nil, id: "b-r3", [Self.element("reactions", "urn:xmpp:reactions:0", ["id": copyID], children: [Self.element("reaction", "urn:xmpp:reactions:0", text: "✅")])])
        )
        let reaction = await Self.received(link.alice.log) { RichContent.parse($0).content.reactionTo != nil }
        #expect(reaction.map(RichContent.parse)?.content.reactionTo == "a-receipt")
        await link.stop()
    }

    @Test("an OMEMO message is not relayed as text; the sender gets one notice per day, however many she sends")
    func encryptedNotRelayed() async throws {
        let link = try await Link.start()
        let omemo = [
            Self.element("encrypted", "eu.siacs.conversations.axolotl", children: [
                Self.element("header", "eu.siacs.conversations.axolotl", ["sid": "1234"], children: [Self.element("iv", "eu.siacs.conversations.axolotl", text: "AAAA")]),
                Self.element("payload", "eu.siacs.conversations.axolotl", text: "c2VjcmV0"),
            ]),
            Self.element("encryption", "urn:xmpp:eme:0", ["namespace": "eu.siacs.conversations.axolotl", "name": "OMEMO"]),
        ]
        let fallback = "I sent you an OMEMO encrypted message but your client doesn’t seem to support that."
        try await link.aliceSends(Self.message(fallback, id: "a-omemo-1", omemo))
        let notice = await Self.received(link.alice.log) { $0.body?.contains("cannot relay messages encrypted with OMEMO") == true }
        #expect(notice?.from?.bare.description == "work@example.test")
        try await link.aliceSends(Self.message(fallback, id: "a-omemo-2", omemo))
        // Markers: alice's plain message after the second one reaches bob (so it was handled),
        // then bob's answer reaches alice behind any notice queued for her before it.
        try await link.aliceSends(Self.message("plain after", id: "a-plain"))
        #expect(await Received.message(link.bob.log, body: "plain after") != nil)
        try await link.bobSends(Self.message("marker", id: "b-marker"))
        #expect(await Received.message(link.alice.log, body: "marker") != nil)
        #expect(await Received.bodies(link.bob.log) == ["plain after"], "bob never got the fallback text")
        let notices = await Received.bodies(link.alice.log).filter { $0.contains("cannot relay") }
        #expect(notices.count == 1, "one notice per conversation per day: \(notices)")
        await link.stop()
    }

    /// The stanza-id the room gave `message` (XEP-0359 §6, by the room's JID).
    static func stanzaID(_ message: Message?, room: JID) -> String? {
        message?.extensions.first { $0.name == "stanza-id" && $0.namespace == OriginID.namespace && $0[attribute: "by"] == room.description }?[attribute: "id"]
    }

    @Test("a room as target: references use the room's stanza-ids both ways (reaction, reply and retraction)")
    func roomStanzaIDs() async throws {
        var options = ProsodyServer.Options()
        options.rooms = true
        let server = try await ProsodyServer.started(options, accounts: ["alice", "bob", "work"].map { ($0, "pw") })
        defer { server.shutdown() }
        let room = try JID("dev@\(server.mucDomain)")
        let bob = try await TestSession.start("bob", on: server, rooms: [RoomConfiguration(jid: room, nick: "bob")])
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["work"],
            rest: """
                [channels.room]
                format = "{nick}: {body}"
                members = [
                  { account = "work", jid = "alice@example.test" },
                  { account = "work", room = "\(room)", nick = "bridge" },
                ]
                """
        )
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["work"])
        #expect(await bridge.waitForLog(timeout: .seconds(20)) { $0.contains("joined room") })
        let alice = try await TestSession.start("alice", on: server)
        func aliceSends(_ message: Message) async throws {
            var message = message
            message.header.to = try JID("work@example.test")
            try await alice.session.send(message)
        }

        // alice's message reaches the room; bob reacts to it by the room's stanza-id.
        try await aliceSends(Self.message("hello room", id: "a-1"))
        let copy = await bob.waitForRoomMessage(room) { $0 == "alice: hello room" }
        let copyStanzaID = try #require(Self.stanzaID(copy, room: room), "the room gives stanza-ids")
        var reaction = Message(type: .groupchat, to: room, id: "b-react")
        reaction.extensions = [
            Self.element("reactions", "urn:xmpp:reactions:0", ["id": copyStanzaID], children: [Self.element("reaction", "urn:xmpp:reactions:0", text: "🎉")])
        ]
        try await bob.session.send(reaction)
        let mapped = await Self.received(alice.log) { RichContent.parse($0).content.reactionTo != nil }
        #expect(mapped.map(RichContent.parse)?.content.reactionTo == "a-1", "stderr: \(bridge.run.errors.suffix(2000))")

        // bob posts; alice replies to her copy: the room gets a reply to bob's stanza-id.
        try await bob.say("question?", in: room)
        let posted = await bob.waitForRoomMessage(room) { $0 == "question?" }
        let postedStanzaID = try #require(Self.stanzaID(posted, room: room))
        let aliceCopy = try #require(await Self.received(alice.log) { $0.body == "bob: question?" })
        try await aliceSends(
            Self.message("answer", id: "a-2", [Self.element("reply", "urn:xmpp:reply:0", ["id": try #require(aliceCopy.id)])])
        )
        let reply = await bob.waitForRoomMessage(room) { $0 == "alice: answer" }
        #expect(reply.map(RichContent.parse)?.content.replyTo == postedStanzaID)

        // alice retracts her first message: the room gets a retraction of our copy's stanza-id.
        try await aliceSends(Self.message("retracted", id: "a-3", [Self.element("retract", "urn:xmpp:message-retract:1", ["id": "a-1"])]))
        let retraction = await bob.log.waitFor(timeout: .seconds(10)) {
            if case .message(let message, nil) = $0 { return message.type == .groupchat && RichContent.parse(message).content.retractID != nil }
            return false
        }
        if case .message(let message, _) = retraction {
            #expect(RichContent.parse(message).content.retractID == copyStanzaID)
        } else {
            Issue.record("the room got no retraction")
        }
        await alice.stop()
        await bob.stop()
    }

    @Test("a socket client gets url, replace_id and encrypted fields with its own ids, and its reaction and reply reach alice on her ids")
    func localJSONFields() async throws {
        let server = try await ProsodyServer.started(accounts: ["alice", "work"].map { ($0, "pw") })
        defer { server.shutdown() }
        let path = "\(server.directory)/ops.sock"
        let config = try BridgeConfigFile.write(
            for: server, accounts: ["work"],
            rest: """
                [local.ops]
                kind = "socket"
                path = "ops.sock"

                [channels.ops]
                format = "{nick}: {body}"
                members = [
                  { local = "ops" },
                  { account = "work", jid = "alice@example.test" },
                ]
                """
        )
        let bridge = try BridgeDaemon.start(config: config, in: server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(["work"])
        try await bridge.waitForSocket(path)
        let alice = try await TestSession.start("alice", on: server)
        let client = try UnixLineClient(path: path)
        defer { client.close() }
        try client.send(#"{"subscribe":["ops"]}"#)
        #expect(await client.readObject()?["ok"] as? String == "subscribed")
        func aliceSends(_ message: Message) async throws {
            var message = message
            message.header.to = try JID("work@example.test")
            try await alice.session.send(message)
        }

        try await aliceSends(Self.message("first", id: "a-1"))
        let first = try #require(await client.readObject(), "stderr: \(bridge.run.errors.suffix(2000))")
        let firstID = try #require(first["id"] as? String)
        try await aliceSends(Self.message("first, fixed", id: "a-2", [Self.element("replace", "urn:xmpp:message-correct:0", ["id": "a-1"])]))
        let fixed = try #require(await client.readObject())
        #expect(fixed["body"] as? String == "first, fixed")
        #expect(fixed["replace_id"] as? String == firstID, "the id this client was given")
        let url = "https://upload.example.test/f/1/chart.png"
        try await aliceSends(Self.message(url, id: "a-3", [Self.oob(url)]))
        #expect(await client.readObject()?["url"] as? String == url)
        try await aliceSends(Self.message("I sent you an OMEMO encrypted message", id: "a-4", [Self.element("encrypted", "eu.siacs.conversations.axolotl")]))
        let encrypted = try #require(await client.readObject())
        #expect(encrypted["encrypted"] as? String == "OMEMO")
        #expect((encrypted["body"] as? String)?.contains("I sent you") == false, "the fallback body is not passed on")

        // The client reacts to and answers alice's first message by the id it was given.
        try client.send(#"{"channel":"ops","reaction":{"id":"\#(firstID)","emojis":["👀"]}}"#)
        let reaction = await Self.received(alice.log) { RichContent.parse($0).content.reactionTo != nil }
        #expect(reaction.map(RichContent.parse)?.content == RichContent(reactionTo: "a-1", reactions: ["👀"]))
        try client.send(#"{"channel":"ops","body":"on it","reply_to":"\#(firstID)"}"#)
        let reply = await Self.received(alice.log) { $0.body?.hasSuffix("on it") == true }
        #expect(reply.map(RichContent.parse)?.content.replyTo == "a-1")
        await alice.stop()
    }
}
