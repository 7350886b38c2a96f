import Foundation
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeRouting
@testable import BridgeState

/// Rich messages through the pure router (issue 12): files with captions, operations mapped
/// through the id map to each target's own copy, fallbacks where a target has none, and
/// encrypted messages kept from XMPP targets.
@Suite("Rich routing")
struct RichRoutingTests {
    static let alice = Endpoint(transport: "work", address: "alice@x.test")
    static let bob = Endpoint(transport: "home", address: "bob@x.test")
    static let carol = Endpoint(transport: "home", address: "carol@x.test")
    static let out = Endpoint(transport: "stdout")

    static func router(format: String = "{nick}: {body}", members: [Endpoint] = [alice, bob, carol, out]) -> Router {
        Router(channels: [RelayChannel(name: "c", members: members.map { ChannelMember(endpoint: $0, direction: .inout) }, format: format)], ownJIDs: [])
    }

    static func message(_ body: String?, _ content: MessageContent, from source: Endpoint = alice, id: String = "a-9") -> InboundMessage {
        var message = InboundMessage(source: source, sender: "\(source.address ?? "")/phone", nick: "Alice", id: id, body: body)
        message.content = content
        return message
    }

    static func deliveries(_ router: Router, _ message: InboundMessage, references: ReferenceMap = ReferenceMap()) -> [Delivery] {
        var next = 0
        let decision = router.route(message, references: references) {
            next += 1
            return "r\(next)"
        }
        guard case .deliver(let deliveries) = decision else { return [] }
        return deliveries
    }

    static func record(_ relayID: String, source: Endpoint, sourceID: String, target: Endpoint) -> RelayRecord {
        RelayRecord(relayID: relayID, channel: "c", source: source, sourceID: sourceID, target: target, createdAt: Date(timeIntervalSince1970: 0))
    }

    @Test("a file: caption first, then body == URL with OOB; local outputs get one line with url")
    func fileWithCaption() {
        let url = "https://u.test/f/cat.png"
        let got = Self.deliveries(Self.router(), Self.message("a cat", MessageContent(url: url)))
        let toBob = got.filter { $0.target == Self.bob }
        #expect(toBob.map(\.body) == ["Alice: a cat", url])
        #expect(toBob.map(\.content.url) == [nil, url])
        #expect(toBob.map(\.relayID) == ["r1", "r2"], "each its own relay id, in order")
        let local = got.filter { $0.target == Self.out }
        #expect(local.map(\.originalBody) == ["a cat \(url)"])
        #expect(local.first?.content.url == url)
    }

    @Test("a caption that carries the file's URL too loses the URL, so the link does not show twice (issue 25)")
    func captionWithURL() {
        let url = "https://u.test/f/cat.png"
        let got = Self.deliveries(Self.router(), Self.message("look at this\n\(url)", MessageContent(url: url)))
        #expect(got.filter { $0.target == Self.bob }.map(\.body) == ["Alice: look at this", url])
        #expect(got.filter { $0.target == Self.out }.map(\.originalBody) == ["look at this \(url)"])
        // The URL inside a sentence, or in a longer URL, stays.
        let inside = Self.deliveries(Self.router(format: "{body}"), Self.message("see \(url)?x=1 and \(url) later", MessageContent(url: url)))
        #expect(inside.filter { $0.target == Self.bob }.map(\.body) == ["see \(url)?x=1 and \(url) later", url])
        let last = Self.deliveries(Self.router(format: "{body}"), Self.message("the cat \(url)", MessageContent(url: url)))
        #expect(last.filter { $0.target == Self.bob }.map(\.body) == ["the cat", url])
        // The URL alone is no caption at all.
        let alone = Self.deliveries(Self.router(format: "{body}"), Self.message(url, MessageContent(url: url)))
        #expect(alone.filter { $0.target == Self.bob }.map(\.body) == [url])
    }

    @Test("a file without caption: the file's name in the format when it adds attribution, nothing extra for {body}")
    func fileWithoutCaption() {
        let url = "https://u.test/f/build%20log.txt"
        let attributed = Self.deliveries(Self.router(), Self.message(url, MessageContent(url: url))).filter { $0.target == Self.bob }
        #expect(attributed.map(\.body) == ["Alice: build log.txt", url])
        let plain = Self.deliveries(Self.router(format: "{body}"), Self.message(url, MessageContent(url: url))).filter { $0.target == Self.bob }
        #expect(plain.map(\.body) == [url])
    }

    @Test("a correction of alice's message becomes a correction of each target's copy")
    func correctionMapped() {
        let references = ReferenceMap(
            own: [Self.record("r-bob", source: Self.alice, sourceID: "a-1", target: Self.bob), Self.record("r-out", source: Self.alice, sourceID: "a-1", target: Self.out)],
            received: nil, siblings: []
        )
        let got = Self.deliveries(Self.router(), Self.message("fixed", MessageContent(replaceID: "a-1")), references: references)
        #expect(got.first { $0.target == Self.bob }?.content.replaceID == "r-bob")
        #expect(got.first { $0.target == Self.out }?.content.replaceID == "r-out")
        // carol never got the original: a new message, marked.
        let carol = got.first { $0.target == Self.carol }
        #expect(carol?.content.replaceID == nil)
        #expect(carol?.body == "Alice: [correction] fixed")
    }

    @Test("bob reacts to his copy: alice gets it on her own id, carol on hers")
    func reactionToCopy() {
        let references = ReferenceMap(
            own: [], received: Self.record("r-bob", source: Self.alice, sourceID: "a-1", target: Self.bob),
            siblings: [Self.record("r-bob", source: Self.alice, sourceID: "a-1", target: Self.bob), Self.record("r-carol", source: Self.alice, sourceID: "a-1", target: Self.carol)]
        )
        let got = Self.deliveries(Self.router(), Self.message(nil, MessageContent(reactionTo: "r-bob", reactions: ["👍"]), from: Self.bob), references: references)
        #expect(got.first { $0.target == Self.alice }?.content == MessageContent(reactionTo: "a-1", reactions: ["👍"]))
        #expect(got.first { $0.target == Self.alice }?.body == "", "no body for clients with reactions")
        #expect(got.first { $0.target == Self.carol }?.content.reactionTo == "r-carol")
        // The local output never got the original: it gets the text.
        #expect(got.first { $0.target == Self.out }?.originalBody == "reacted 👍")
        #expect(got.first { $0.target == Self.out }?.content.reactionTo == nil)
    }

    @Test("a retraction goes only to targets with a copy; with none, it is dropped with a reason")
    func retraction() {
        let references = ReferenceMap(own: [Self.record("r-bob", source: Self.alice, sourceID: "a-1", target: Self.bob)], received: nil, siblings: [])
        let got = Self.deliveries(Self.router(), Self.message("fallback", MessageContent(retractID: "a-1")), references: references)
        #expect(got.map(\.target) == [Self.bob])
        #expect(got.first?.content.retractID == "r-bob")
        let none = Self.router().route(Self.message("fallback", MessageContent(retractID: "zzz"))) { "r" }
        #expect(none == .drop(reason: .unknownReference))
    }

    @Test("a file and its caption are two copies: a retraction retracts both; a reaction lands on the file")
    func fileCopies() {
        let references = ReferenceMap(
            own: [Self.record("r-caption", source: Self.alice, sourceID: "a-1", target: Self.bob), Self.record("r-file", source: Self.alice, sourceID: "a-1", target: Self.bob)],
            received: nil, siblings: []
        )
        let retraction = Self.deliveries(Self.router(), Self.message("x", MessageContent(retractID: "a-1")), references: references)
        #expect(retraction.map(\.content.retractID) == ["r-caption", "r-file"])
        #expect(references.id(for: Self.bob) == "r-file")
        #expect(references.id(for: Self.bob, correction: true) == "r-caption")
    }

    @Test("a reply keeps its quote: marked for a target with the copy, plain text for one without")
    func replyFallback() {
        let quote = "> helo\n"
        let references = ReferenceMap(own: [], received: Self.record("r-bob", source: Self.alice, sourceID: "a-1", target: Self.bob), siblings: [])
        let got = Self.deliveries(Self.router(), Self.message("hi", MessageContent(replyTo: "r-bob", replyFallback: quote), from: Self.bob), references: references)
        let toAlice = got.first { $0.target == Self.alice }
        #expect(toAlice?.content == MessageContent(replyTo: "a-1", replyFallback: quote))
        #expect(toAlice?.body == "Alice: hi", "the transport puts the quote in front, marked")
        let toCarol = got.first { $0.target == Self.carol }
        #expect(toCarol?.content.replyTo == nil)
        #expect(toCarol?.body == quote + "Alice: hi")
    }

    @Test("an encrypted message: no XMPP target gets its fallback body; local outputs get an event; no local output, dropped as encrypted")
    func encrypted() {
        let message = Self.message("I sent you an OMEMO encrypted message", MessageContent(encryption: "OMEMO"))
        let got = Self.deliveries(Self.router(), message)
        #expect(got.map(\.target) == [Self.out])
        #expect(got.first?.content.encryption == "OMEMO")
        #expect(Self.router(members: [Self.alice, Self.bob]).route(message) { "r" } == .drop(reason: .encrypted("OMEMO")))
        let notice = Self.router(members: [Self.alice, Self.bob]).encryptionNotice(for: message, relayID: "n1")
        #expect(notice?.target == Self.alice)
        #expect(notice?.body.contains("OMEMO") == true)
        let stranger = Self.message("x", MessageContent(encryption: "OMEMO"), from: Endpoint(transport: "work", address: "eve@x.test"))
        #expect(Self.router().encryptionNotice(for: stranger, relayID: "n2") == nil, "strangers get no answer")
    }

    @Test("one notice per conversation per day; the clock going back does not silence it")
    func noticesPerDay() {
        var notices = EncryptionNotices(interval: 86_400, capacity: 2)
        let start = Date(timeIntervalSince1970: 1_000_000)
        var told: [Bool] = []
        told.append(notices.shouldNotify(Self.alice, now: start))
        told.append(notices.shouldNotify(Endpoint(transport: "work", address: "ALICE@x.test"), now: start.addingTimeInterval(3_600)))
        told.append(notices.shouldNotify(Self.bob, now: start))
        told.append(notices.shouldNotify(Self.alice, now: start.addingTimeInterval(86_400)))
        // Over capacity: the oldest is forgotten.
        told.append(notices.shouldNotify(Self.carol, now: start.addingTimeInterval(86_401)))
        // The clock going back does not silence a conversation.
        told.append(notices.shouldNotify(Self.bob, now: start.addingTimeInterval(-10)))
        #expect(told == [true, false, true, true, true, true])
    }

    @Test("rich content survives the queue column; an unreadable column reads as plain text")
    func column() {
        let content = MessageContent(url: "https://u.test/a.png", replyTo: "r", replyFallback: "> q\n")
        #expect(MessageContentColumn.decode(MessageContentColumn.encode(content)) == content)
        #expect(MessageContentColumn.encode(MessageContent()) == nil)
        #expect(MessageContentColumn.decode("{not json") == MessageContent())
    }

    @Test("queue rows written before MessageContent (RichContent's JSON) read the same")
    func columnWrittenByAnEarlierVersion() {
        let stored = #"{"confirms":"c","confirmsDisplayed":true,"encryption":"OMEMO","reactionTo":"t","reactions":["👍"],"#
            + #""replaceID":"p","replyFallback":"> q\n","replyTo":"r","retractID":"x","reuploadMaxBytes":1024,"url":"https:\/\/u.test\/a.png"}"#
        let expected = MessageContent(
            url: "https://u.test/a.png", replaceID: "p", replyTo: "r", replyFallback: "> q\n", reactionTo: "t", reactions: ["👍"], retractID: "x",
            encryption: "OMEMO", receiptFor: "c", receiptDisplayed: true, reuploadMaxBytes: 1024
        )
        #expect(MessageContentColumn.decode(stored) == expected)
        #expect(MessageContentColumn.encode(expected) == stored)
    }
}
