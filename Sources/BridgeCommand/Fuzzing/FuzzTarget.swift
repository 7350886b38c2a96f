import Bridge
import Foundation
import LocalTransport
import TransportCore
import XMPP

/// One parser of peer or user input, driven by arbitrary bytes (libFuzzer through
/// `scripts/fuzz.sh`, and the seed corpus in the test suite). Each run must end in a value
/// or a typed error: a trap, a hang or a sanitizer report is a defect.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// The XML stream parser fed in two pieces, each stanza decoded as message, presence or IQ.
    case xml
    /// JID parsing and preparation (RFC 7622).
    case jid
    /// DNS SRV answers.
    case dns
    /// SCRAM server-first then server-final messages.
    case scram
    /// The `bridge.toml` loader.
    case config
    /// Socket client lines: line splitting, then the JSON request.
    case socket

    /// Runs one input.
    func run(_ data: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .xml: Self.xml(data)
        case .jid: _ = try? JID(String(decoding: data, as: UTF8.self))
        case .dns: _ = try? DNSResponseParser.srvRecords(from: Array(data))
        case .scram: Self.scram(data)
        case .config: Self.config(data)
        case .socket: Self.socket(data)
        }
    }

    private static func xml(_ data: UnsafeBufferPointer<UInt8>) {
        let parser = XMLStreamParser(limits: XMLStreamLimits(maxStanzaBytes: 64 * 1024, maxDepth: 32, maxAttributes: 64))
        // The first byte says where the input is cut: the parser must not care.
        let cut = data.isEmpty ? 0 : Int(data[0]) % max(data.count, 1)
        var events: [XMLStreamEvent] = []
        let header = Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>".utf8)
        for piece in [header[...], Array(data)[..<cut], Array(data)[cut...]] {
            let result = piece.withUnsafeBytes { parser.feed($0, into: &events) }
            for event in events {
                guard case .element(let element) = event else { continue }
                switch element.name {
                case "message":
                    // What a relay reads from a peer's message (issue 12), and writes back.
                    if let message = try? Message(element: element) {
                        let (content, text) = RichContent.parse(message)
                        _ = content.outgoing(text: text)
                    }
                case "presence": _ = try? Presence(element: element)
                case "iq": _ = try? IQ(element: element)
                default: break
                }
                // What we would write back out (a relay) must serialise too.
                _ = XMLSerializer.string(element, parentNamespace: "jabber:client")
            }
            events.removeAll(keepingCapacity: true)
            if case .failure = result { return }
            // The first byte's high bit: the parser trimmed where it can be, as after a pause.
            if let first = data.first, first & 0x80 != 0 { parser.trim() }
        }
    }

    private static func scram(_ data: UnsafeBufferPointer<UInt8>) {
        let bytes = Array(data)
        let split = bytes.firstIndex(of: 0) ?? bytes.count
        guard var machine = try? SCRAMStateMachine(algorithm: .sha1, username: "user", password: "pencil", clientNonce: "fyko+d2lbbFgONRv9qkxdawL", maximumIterationCount: 4096)
        else { return }
        _ = machine.start()
        guard (try? machine.challengeReceived(Array(bytes[..<split]))) != nil else { return }
        _ = try? machine.successReceived(additionalData: split < bytes.count ? Array(bytes[(split + 1)...]) : [])
    }

    private static func config(_ data: UnsafeBufferPointer<UInt8>) {
        let folder = NSTemporaryDirectory() + "xmpp-bridge-fuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = folder + "/bridge.toml"
        guard FileManager.default.createFile(atPath: file, contents: Data(buffer: data)) else { return }
        var loader = ConfigurationLoader(file: file)
        _ = try? loader.loadBridge()
    }

    private static func socket(_ data: UnsafeBufferPointer<UInt8>) {
        var splitter = LineSplitter(maxLineBytes: 4096, invalidUTF8: .replace)
        var lines: [LineSplitter.Line] = []
        splitter.feed(data, into: &lines)
        splitter.finish(into: &lines)
        for line in lines {
            switch line {
            case .text(let text), .repaired(let text):
                _ = SocketClientRequest.decode(text)
            case .tooLong, .invalidUTF8:
                break
            }
        }
    }
}
