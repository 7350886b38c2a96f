import NIOCore
import Testing

@testable import XMPP

/// Feeds `bytes` to `parser` (a fresh one when nil) in chunks of `chunkSize` (all at once
/// when nil), calling `afterFeed` after each chunk.
func parseStream(
    _ bytes: [UInt8],
    chunkSize: Int? = nil,
    limits: XMLStreamLimits = XMLStreamLimits(),
    parser: XMLStreamParser? = nil,
    afterFeed: (XMLStreamParser) -> Void = { _ in }
) -> (events: [XMLStreamEvent], error: XMLStreamError?) {
    let parser = parser ?? XMLStreamParser(limits: limits)
    var events: [XMLStreamEvent] = []
    let size = chunkSize ?? max(bytes.count, 1)
    var offset = 0
    while offset < bytes.count {
        let end = min(offset + size, bytes.count)
        do {
            try parser.feed(ByteBuffer(bytes: bytes[offset..<end]), into: &events)
        } catch {
            return (events, error)
        }
        afterFeed(parser)
        offset = end
    }
    return (events, nil)
}

func parseStream(_ text: String, chunkSize: Int? = nil, limits: XMLStreamLimits = XMLStreamLimits())
    -> (events: [XMLStreamEvent], error: XMLStreamError?)
{
    parseStream(Array(text.utf8), chunkSize: chunkSize, limits: limits)
}

/// The first element of `xml`, written inside a `jabber:client` stream; a parse error
/// fails the test.
func parsedElement(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> XMLElement {
    let result = parseStream(testStreamHeader + xml)
    #expect(result.error == nil, sourceLocation: sourceLocation)
    return try #require(result.events.compactMap(\.element).first, sourceLocation: sourceLocation)
}

let testStreamHeader =
    "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='example.com' id='s1' version='1.0' xml:lang='en'>"

extension XMLStreamEvent {
    var element: XMLElement? {
        if case .element(let element) = self { return element }
        return nil
    }
}
