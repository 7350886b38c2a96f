import Testing

@testable import XMPP

/// Parsing and writing what rich messages carry (issue 12): OOB files, corrections, replies
/// with fallbacks, reactions, retractions (both versions), encryption and receipts.
@Suite("RichContent")
struct RichContentTests {
    private func message(_ inner: String, body: String? = nil) throws -> Message {
        let bodyXML = body.map { "<body>\($0)</body>" } ?? ""
        let result = parseStream(testStreamHeader + "<message from='a@x.test/r' to='b@x.test' type='chat' id='m1'>\(bodyXML)\(inner)</message>")
        if let error = result.error { throw error }
        return try Message(element: #require(result.events.compactMap(\.element).last))
    }

    @Test("OOB, correction, reactions and retraction are read with their ids")
    func parsesOperations() throws {
        let file = RichContent.parse(try self.message("<x xmlns='jabber:x:oob'><url> https://u.test/a/b.png </url></x>", body: "https://u.test/a/b.png"))
        #expect(file.content == RichContent(url: "https://u.test/a/b.png"))
        #expect(RichContent.parse(try self.message("<replace xmlns='urn:xmpp:message-correct:0' id='o1'/>", body: "fixed")).content == RichContent(replaceID: "o1"))
        let reactions = RichContent.parse(try self.message("<reactions xmlns='urn:xmpp:reactions:0' id='o2'><reaction>👍</reaction><reaction>🎉</reaction></reactions>"))
        #expect(reactions.content == RichContent(reactionTo: "o2", reactions: ["👍", "🎉"]))
        #expect(reactions.text == nil)
        #expect(RichContent.parse(try self.message("<retract xmlns='urn:xmpp:message-retract:1' id='o3'/>")).content == RichContent(retractID: "o3"))
        let old = "<apply-to xmlns='urn:xmpp:fasten:0' id='o4'><retract xmlns='urn:xmpp:message-retract:0'/></apply-to>"
        #expect(RichContent.parse(try self.message(old)).content == RichContent(retractID: "o4"))
    }

    @Test("a receipt request or a markable says the sender wants a receipt; neither, nothing; no content either way")
    func receiptWish() throws {
        let request = RichContent.parse(try self.message("<request xmlns='urn:xmpp:receipts'/>", body: "hi")).content
        #expect(request.wantsReceipt == true && request.isEmpty)
        #expect(RichContent.parse(try self.message("<markable xmlns='urn:xmpp:chat-markers:0'/>", body: "hi")).content.wantsReceipt == true)
        #expect(RichContent.parse(try self.message("<request xmlns='urn:xmpp:other'/>", body: "hi")).content.wantsReceipt == nil)
        #expect(RichContent.parse(try self.message("", body: "hi")).content.wantsReceipt == nil)
        // Written: nothing of its own (the sending transport adds the requests).
        #expect(RichContent(wantsReceipt: true).outgoing(text: "hi").elements.isEmpty)
    }

    @Test("a reply's fallback range (code points) is cut from the text; a bad range cuts nothing")
    func replyFallback() throws {
        let quote = "> 😀 hi\n"
        let reply = "<reply xmlns='urn:xmpp:reply:0' id='o5'/><fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'><body start='0' end='\(quote.unicodeScalars.count)'/></fallback>"
        let parsed = RichContent.parse(try self.message(reply, body: quote + "answer"))
        #expect(parsed.content == RichContent(replyTo: "o5", replyFallback: quote))
        #expect(parsed.text == "answer")
        let bad = reply.replacingOccurrences(of: "end='\(quote.unicodeScalars.count)'", with: "end='999'")
        let unchanged = RichContent.parse(try self.message(bad, body: quote + "answer"))
        #expect(unchanged.text == quote + "answer")
        #expect(unchanged.content.replyFallback == nil)
    }

    @Test("ids that are empty or over 256 bytes are ignored")
    func hostileIDs() throws {
        #expect(RichContent.parse(try self.message("<replace xmlns='urn:xmpp:message-correct:0' id=''/>", body: "x")).content.isEmpty)
        let long = String(repeating: "i", count: 257)
        #expect(RichContent.parse(try self.message("<retract xmlns='urn:xmpp:message-retract:1' id='\(long)'/>")).content.isEmpty)
        #expect(RichContent.parse(try self.message("<reactions xmlns='urn:xmpp:reactions:0'><reaction>x</reaction></reactions>")).content.isEmpty)
    }

    @Test("OMEMO, OX, PGP, OTR, EME and aesgcm files are recognised as encrypted")
    func encryption() throws {
        let cases: [(String, String?, String)] = [
            ("<encrypted xmlns='eu.siacs.conversations.axolotl'/>", "I sent you an OMEMO encrypted message", "OMEMO"),
            ("<encrypted xmlns='urn:xmpp:omemo:2'/>", nil, "OMEMO"),
            ("<openpgp xmlns='urn:xmpp:openpgp:0'>x</openpgp>", nil, "OpenPGP"),
            ("<x xmlns='jabber:x:encrypted'>x</x>", "This message is encrypted", "PGP"),
            ("", "?OTRv23?", "OTR"),
            ("<encryption xmlns='urn:xmpp:eme:0' namespace='urn:example:new' name='NewCrypt'/>", "fallback", "NewCrypt"),
            ("", "aesgcm://u.test/a/b.jpg#abcdef", "OMEMO"),
        ]
        for (inner, body, name) in cases {
            let parsed = RichContent.parse(try self.message(inner, body: body))
            #expect(parsed.content.encryption == name, "\(inner) \(body ?? "")")
            #expect(parsed.content.url == nil)
        }
    }

    @Test("a body that is only a file URL is a file; a web page or text with a URL is not")
    func bareFileURL() {
        #expect(RichContent.fileURL(in: "https://upload.test/f/3/report.pdf") == "https://upload.test/f/3/report.pdf")
        #expect(RichContent.fileURL(in: " https://u.test/a/photo.JPG?x=1\n") == "https://u.test/a/photo.JPG?x=1")
        #expect(RichContent.fileURL(in: "https://example.test/index.html") == nil)
        #expect(RichContent.fileURL(in: "https://example.test/") == nil)
        #expect(RichContent.fileURL(in: "https://example.test") == nil)
        #expect(RichContent.fileURL(in: "see https://u.test/a.png") == nil)
        #expect(RichContent.fileURL(in: "ftp://u.test/a.png") == nil)
        #expect(RichContent.fileURL(in: "https://u.test/a/b.") == nil)
        #expect(RichContent.fileURL(in: "https://api.test/v1.2") == nil, "a version is no file extension")
        #expect(RichContent.fileURL(in: "https://git.test/repo.git") == nil)
    }

    @Test("the scheme separator scan finds \"://\" wherever a string search would")
    func schemeSeparatorScan() {
        for text in ["://", "a://b", "::://", "x:/y://", "é://", "https://u", ":/", ":/x/", "a:b//", "//", ":", "", "a:/:/", "ab:/"] {
            #expect(RichContent.containsSchemeSeparator(text.utf8) == text.contains("://"), "\(text)")
        }
    }

    @Test("only OTR's own prefixes mark a body as OTR")
    func otrPrefixes() throws {
        #expect(RichContent.parse(try self.message("", body: "?OTR:AAMDJ+MVmSfjFZcAAAAAAQAAAAIAAADA")).content.encryption == "OTR")
        #expect(RichContent.parse(try self.message("", body: "?OTRv3?")).content.encryption == "OTR")
        #expect(RichContent.parse(try self.message("", body: "?OTR is that you")).content.encryption == nil)
    }

    @Test("a URL's file name: last segment, decoded, without separators or controls")
    func fileNames() {
        #expect(RichContent.fileName(of: "https://u.test/f/3/build%20log.txt?x=1#y") == "build log.txt")
        #expect(RichContent.fileName(of: "https://u.test/f/..%2F..%2Fetc%2Fpasswd") == "....etcpasswd")
        #expect(RichContent.fileName(of: "https://u.test/a%0Ab.png") == "ab.png")
        #expect(RichContent.fileName(of: "https://u.test/") == nil)
        #expect(RichContent.fileName(of: "https://u.test") == nil)
        #expect(RichContent.fileName(of: "https://u.test/%zz.png") == "%zz.png")
    }

    @Test("outgoing: a file's body is its URL; a reply's quote comes first, marked by code points")
    func outgoing() {
        let file = RichContent(url: "https://u.test/a.png").outgoing(text: "caption")
        #expect(file.body == "https://u.test/a.png")
        #expect(file.elements.map(\.name) == ["x"])
        let quote = "> 😀\n"
        let reply = RichContent(replyTo: "r1", replyFallback: quote).outgoing(text: "yes")
        #expect(reply.body == quote + "yes")
        let fallback = reply.elements.first { $0.name == "fallback" }
        #expect(fallback?.firstChild(named: "body")?[attribute: "end"] == "4")
        #expect(reply.elements.first { $0.name == "reply" }?[attribute: "id"] == "r1")
        let retract = RichContent(retractID: "r2").outgoing(text: "retracted")
        #expect(retract.elements.map(\.name) == ["retract", "apply-to", "fallback", "store"])
        let receipt = RichContent(receiptFor: "a1", receiptDisplayed: true).outgoing(text: nil)
        #expect(receipt.body == nil)
        #expect(receipt.elements.first?.name == "displayed")
        #expect(receipt.elements.first?[attribute: "id"] == "a1")
    }

    @Test("what is written reads back the same (round trip through XML)")
    func roundTrip() throws {
        let content = RichContent(replaceID: "c1", replyTo: "r1", replyFallback: "> q\n")
        let (body, elements) = content.outgoing(text: "text")
        var message = Message(type: .chat, id: "m", body: body)
        message.extensions = elements
        let parsed = RichContent.parse(try Message(element: message.element))
        #expect(parsed.content == content)
        #expect(parsed.text == "text")
    }
}
