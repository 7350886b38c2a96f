import NIOCore

@testable import XMPP

/// Feeds `bytes` to a fresh parser in chunks of `chunkSize` (all at once when nil).
func parseStream(
    _ bytes: [UInt8],
    chunkSize: Int? = nil,
    limits: XMLStreamLimits = XMLStreamLimits()
) -> (events: [XMLStreamEvent], error: XMLStreamError?) {
    let parser = XMLStreamParser(limits: limits)
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
        offset = end
    }
    return (events, nil)
}

func parseStream(_ text: String, chunkSize: Int? = nil, limits: XMLStreamLimits = XMLStreamLimits())
    -> (events: [XMLStreamEvent], error: XMLStreamError?)
{
    parseStream(Array(text.utf8), chunkSize: chunkSize, limits: limits)
}

let testStreamHeader =
    "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='example.com' id='s1' version='1.0' xml:lang='en'>"

extension XMLStreamEvent {
    var element: XMLElement? {
        if case .element(let element) = self { return element }
        return nil
    }
}
