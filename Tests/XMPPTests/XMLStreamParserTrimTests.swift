import NIOCore
import NIOEmbedded
import Testing

@testable import XMPP

/// ``XMLStreamParser/trim()``: libxml2's context given back between stanzas and built
/// again, primed with the stream's start tag, at the next bytes.
@Suite("XML stream parser trimmed between stanzas")
struct XMLStreamParserTrimTests {
    /// Streams as servers open them, each with stanzas that inherit its namespaces: the
    /// usual prefixes, an extra declaration used by a stanza, no prefix at all (the stanzas
    /// then declare their namespace), and a component stream read through its alias.
    static let streams: [(header: String, stanzas: String, end: String, alias: (from: String, to: String)?)] = [
        (testStreamHeader, inheriting, "</stream:stream>", nil),
        (
            "<stream:stream xmlns:stream='http://etherx.jabber.org/streams' xmlns='jabber:client' xmlns:db='jabber:server:dialback' version='1.0'>",
            inheriting + "<db:result from='a.example' to='b.example'>key</db:result>", "</stream:stream>", nil
        ),
        ("<stream xmlns='http://etherx.jabber.org/streams' version='1.0'>", declaring, "</stream>", nil),
        (
            "<x:stream xmlns:x='http://etherx.jabber.org/streams' xmlns='jabber:component:accept' id='c1'>", inheriting, "</x:stream>",
            ("jabber:component:accept", "jabber:client")
        ),
    ]

    static let inheriting =
        "<message type='chat' id='m1'><body>&lt;one&gt; 😀</body><ext:t xmlns:ext='urn:x' ext:a='v'/></message>"
        + " \n "
        + "<presence><show>away</show></presence>"
        + "<iq type='get' id='p'><ping xmlns='urn:xmpp:ping'/></iq>"
        + "\n"
        + "<message id='m2'><body>two</body></message>"

    static let declaring =
        "<message xmlns='jabber:client' type='chat' id='m1'><body>&lt;one&gt; 😀</body></message>"
        + " \n "
        + "<presence xmlns='jabber:client'><show>away</show></presence>"
        + "<message xmlns='jabber:client' id='m2'><body>two</body></message>"

    /// Feeds `text` in pieces of `size`, trying a trim after each; the events and how many
    /// trims took.
    static func parseTrimming(
        _ text: String, chunkSize size: Int, alias: (from: String, to: String)? = nil, limits: XMLStreamLimits = XMLStreamLimits()
    ) -> (events: [XMLStreamEvent], error: XMLStreamError?, trims: Int) {
        var trims = 0
        let parser = XMLStreamParser(limits: limits, namespaceAlias: alias)
        let (events, error) = parseStream(Array(text.utf8), chunkSize: size, parser: parser) { parser in
            if parser.trim() {
                trims += 1
                #expect(!parser.holdsContext)
            }
        }
        return (events, error, trims)
    }

    static func parseWhole(_ text: String, alias: (from: String, to: String)?) -> [XMLStreamEvent] {
        let parser = XMLStreamParser(namespaceAlias: alias)
        var events: [XMLStreamEvent] = []
        #expect(throws: Never.self) { try parser.feed(ByteBuffer(string: text), into: &events) }
        return events
    }

    @Test("fed in pieces of any size and trimmed wherever it may be, a stream reads as without trims", arguments: [0, 1, 2, 3])
    func sameEvents(_ stream: Int) {
        let (header, stanzas, end, alias) = Self.streams[stream]
        let text = header + stanzas + end
        let expected = Self.parseWhole(text, alias: alias)
        #expect(expected.last == .streamClosed)
        // What the stanzas inherit is what a lost declaration would change.
        let namespaces = Set(expected.compactMap(\.element).map(\.namespace))
        #expect(namespaces.isSubset(of: ["jabber:client", "jabber:server:dialback"]) && namespaces.contains("jabber:client"))
        for size in [1, 2, 5, 64, text.utf8.count] {
            let trimmed = Self.parseTrimming(text, chunkSize: size, alias: alias)
            #expect(trimmed.error == nil, "chunk size \(size)")
            #expect(trimmed.events == expected, "chunk size \(size)")
            // Pieces that never end where a stanza does leave nothing to trim.
            #expect(size > 2 || trimmed.trims >= 3, "chunk size \(size)")
        }
    }

    @Test("no trim before the stream's start tag, inside a stanza, with a partial tag held, or after an error")
    func refused() throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        #expect(!parser.trim())
        try parser.feed(ByteBuffer(string: "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/str"), into: &events)
        #expect(!parser.trim())
        try parser.feed(ByteBuffer(string: "eams'><message><body>a</body>"), into: &events)
        #expect(!parser.trim(), "a stanza is open")
        try parser.feed(ByteBuffer(string: "</message> <mess"), into: &events)
        #expect(!parser.trim(), "the start of a tag is held")
        try parser.feed(ByteBuffer(string: "age/>"), into: &events)
        #expect(parser.trim())
        #expect(events.compactMap(\.element).count == 2)

        #expect(throws: XMLStreamError.self) { try parser.feed(ByteBuffer(string: "text<message/>"), into: &events) }
        #expect(!parser.trim(), "a failed parser keeps its error")
        #expect(throws: XMLStreamError.self) { try parser.feed(ByteBuffer(string: "<message/>"), into: &events) }
    }

    @Test("whitespace held after a stanza is dropped by a trim; a stanza split over the trim point is not")
    func heldWhitespace() throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        try parser.feed(ByteBuffer(string: testStreamHeader + "<message id='a'/>\n"), into: &events)
        try parser.feed(ByteBuffer(string: " \t"), into: &events)
        #expect(parser.trim())
        try parser.feed(ByteBuffer(string: " <message id='b'/> x"), into: &events)
        #expect(!parser.trim(), "text that is not whitespace is held")
        #expect(events.compactMap(\.element).map { $0[attribute: "id"] } == ["a", "b"])
    }

    @Test("the size limit counts from the trim point like from any stanza's end")
    func limitAfterTrim() throws {
        let limits = XMLStreamLimits(maxStanzaBytes: 200)
        let fits = "<message><body>" + String(repeating: "a", count: 150) + "</body></message>"
        let tooBig = "<message><body>" + String(repeating: "b", count: 250) + "</body></message>"
        let passing = Self.parseTrimming(testStreamHeader + fits + fits + fits, chunkSize: 1, limits: limits)
        #expect(passing.error == nil)
        #expect(passing.events.compactMap(\.element).count == 3)
        #expect(passing.trims >= 2)
        let failing = Self.parseTrimming(testStreamHeader + fits + tooBig, chunkSize: 1, limits: limits)
        #expect(failing.error?.condition == .policyViolation)
        #expect(failing.events.compactMap(\.element).count == 1)
    }

    @Test("a trimmed parser is restarted by reset like any other (RFC 6120 §4.3.3)")
    func resetAfterTrim() throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        try parser.feed(ByteBuffer(string: testStreamHeader + "<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"), into: &events)
        #expect(parser.trim())
        parser.reset()
        #expect(parser.holdsContext)
        try parser.feed(ByteBuffer(string: testStreamHeader + "<message/>"), into: &events)
        #expect(events.count == 4)
        guard case .streamOpened = events[2] else {
            Issue.record("expected a new stream's start tag, got \(events[2])")
            return
        }
    }

    @Test("a stream whose namespace would need escaping is never trimmed")
    func unusualNamespace() throws {
        let parser = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        try parser.feed(ByteBuffer(string: "<stream:stream xmlns=\"urn:odd'ns\" xmlns:stream='http://etherx.jabber.org/streams'><message/>"), into: &events)
        #expect(!parser.trim())
        #expect(parser.holdsContext)
        #expect(events.compactMap(\.element).first?.namespace == "urn:odd'ns")
    }

    @Test("no trim inside a CDATA section between stanzas; a released parser takes nothing more")
    func oddStreams() throws {
        let cdata = XMLStreamParser()
        var events: [XMLStreamEvent] = []
        // libxml2 reads CDATA between stanzas as whitespace text only once it has ended.
        try cdata.feed(ByteBuffer(string: testStreamHeader + "<message/><![CDATA[ "), into: &events)
        #expect(!cdata.trim())
        try cdata.feed(ByteBuffer(string: " ]]><message/>"), into: &events)
        #expect(events.compactMap(\.element).count == 2)

        let released = XMLStreamParser()
        try released.feed(ByteBuffer(string: testStreamHeader + "<message/>"), into: &events)
        released.release()
        #expect(!released.holdsContext)
        #expect(!released.trim())
        #expect(throws: XMLStreamError.self) { try released.feed(ByteBuffer(string: "<message/>"), into: &events) }
    }

    /// A connection in a sweep, as the channel handler is one: a read stamps the generation;
    /// a trim may be refused.
    final class Member: IdleTrimMember {
        var lastReadGeneration = 0
        var canTrim = true
        var closed = false
        private(set) var trims = 0

        func trimForSweep(quietSince: Int) -> Bool {
            if self.closed { return true }
            guard self.lastReadGeneration < quietSince, self.canTrim else { return false }
            self.trims += 1
            return true
        }
    }

    @Test("the sweep trims a connection one to two ticks after its last read, keeps one that reads, retries a refused trim, drops a closed one at once; its timer runs only while it has members")
    func sweep() throws {
        let loop = EmbeddedEventLoop()
        defer { try? loop.syncShutdownGracefully() }
        let sweep = IdleTrimSweep(eventLoop: loop, period: .seconds(10))
        let quiet = Member(), busy = Member(), stuck = Member(), gone = Member()
        stuck.canTrim = false
        for member in [quiet, busy, stuck, gone] {
            member.lastReadGeneration = sweep.generation
            sweep.add(member)
        }
        loop.advanceTime(by: .seconds(10))  // generation 1: everyone read during generation 0
        #expect(sweep.generation == 1)
        #expect(sweep.count == 4)
        busy.lastReadGeneration = sweep.generation
        gone.closed = true
        loop.advanceTime(by: .seconds(10))  // generation 2: quiet and stuck read nothing during 1
        #expect(quiet.trims == 1)
        #expect(busy.trims == 0)
        #expect(sweep.count == 2, "quiet left after its trim, gone as closed; stuck stays while its trim is refused")
        busy.lastReadGeneration = sweep.generation
        loop.advanceTime(by: .seconds(10))
        #expect(busy.trims == 0)
        #expect(sweep.count == 2)
        stuck.canTrim = true
        loop.advanceTime(by: .seconds(10))
        #expect(stuck.trims == 1)
        #expect(busy.trims == 1)
        #expect(sweep.count == 0)
        // Without members the timer has stopped: no tick until one joins again.
        loop.advanceTime(by: .seconds(60))
        #expect(sweep.generation == 4)
        quiet.lastReadGeneration = sweep.generation
        sweep.add(quiet)
        loop.advanceTime(by: .seconds(20))
        #expect(sweep.generation == 6)
        #expect(quiet.trims == 2)
        #expect(sweep.count == 0)
    }
}
