// XML stream decode throughput: XMPP.XMLStreamParser (trees + Swift strings) against
// libxml2's raw SAX2 push pass over the same bytes in the same run.
// Usage: swift run -c release xml-stream-benchmark [stanzas] [rounds]
import CXMLBaseline
import Foundation
import NIOCore
import TestSupport
import XMPP

let stanzaCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 100_000 : 100_000
let rounds = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 5 : 5
let chunkSize = 16 * 1024

func makeCapture() -> [UInt8] {
    var random = SplitMix64(state: 42)
    let words = [
        "hello", "build", "failed", "deploy", "ok", "the", "server", "restarted", "at", "noon", "&amp;", "&lt;tag&gt;",
        "😀", "中文", "日本語", "Grüße", "naïve", "ticket", "#4521", "merged", "into", "main", "\"quoted\"", "it's",
    ]
    var text = "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' from='example.com' id='bench' version='1.0' xml:lang='en'>"
    for index in 0..<stanzaCount {
        let wordCount = Int.random(in: 1...60, using: &random)
        let body = (0..<wordCount).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }.joined(separator: " ")
        let user = Int.random(in: 0..<50, using: &random)
        text += "<message from='user\(user)@example.com/phone' to='bot@example.org/bridge' type='chat' id='m\(index)-\(random.next() % 100_000)'>"
        text += "<body>\(body)</body>"
        if index % 3 == 0 { text += "<active xmlns='http://jabber.org/protocol/chatstates'/>" }
        if index % 5 == 0 { text += "<request xmlns='urn:xmpp:receipts'/><thread>t\(index % 97)</thread>" }
        text += "</message>"
        if index % 10 == 0 { text += "\n" }
    }
    return Array(text.utf8)
}

let capture = makeCapture()
let buffers: [ByteBuffer] = stride(from: 0, to: capture.count, by: chunkSize).map {
    ByteBuffer(bytes: capture[$0..<min($0 + chunkSize, capture.count)])
}
let megabytes = Double(capture.count) / 1_000_000

func measure(_ body: () -> Int) -> (seconds: Double, result: Int) {
    let start = ContinuousClock.now
    let result = body()
    let elapsed = ContinuousClock.now - start
    let (seconds, attoseconds) = elapsed.components
    return (Double(seconds) + Double(attoseconds) / 1e18, result)
}

func runOurs() -> Int {
    let parser = XMLStreamParser(limits: XMLStreamLimits())
    var events: [XMLStreamEvent] = []
    var elements = 0
    for buffer in buffers {
        do {
            try parser.feed(buffer, into: &events)
        } catch {
            fatalError("benchmark capture rejected: \(error)")
        }
        for event in events {
            if case .element = event { elements += 1 }
        }
        events.removeAll(keepingCapacity: true)
    }
    return elements
}

func runBaseline() -> Int {
    capture.withUnsafeBufferPointer { bytes in
        bytes.withMemoryRebound(to: CChar.self) { Int(cxmlbaseline_parse($0.baseAddress, $0.count, chunkSize)) }
    }
}

print("capture: \(stanzaCount) message stanzas, \(String(format: "%.1f", megabytes)) MB, fed in \(chunkSize / 1024) KiB chunks, \(rounds) rounds")
var ours: [Double] = []
var baseline: [Double] = []
if ProcessInfo.processInfo.environment["BENCH_ONLY_OURS"] != nil {
    for _ in 0..<rounds { _ = runOurs() }
    exit(0)
}
for _ in 0..<rounds {
    let base = measure(runBaseline)
    precondition(base.result > stanzaCount, "baseline failed to parse the capture")
    baseline.append(base.seconds)
    let mine = measure(runOurs)
    precondition(mine.result == stanzaCount, "expected \(stanzaCount) stanzas, got \(mine.result)")
    ours.append(mine.seconds)
}
let oursMedian = ours.sorted()[rounds / 2]
let baselineMedian = baseline.sorted()[rounds / 2]
func line(_ name: String, _ seconds: Double) -> String {
    String(format: "%-28@ %7.1f MB/s %10.0f stanzas/s (median %.3f s)", name as NSString, megabytes / seconds, Double(stanzaCount) / seconds, seconds)
}
print(line("libxml2 raw SAX (baseline)", baselineMedian))
print(line("XMLStreamParser (ours)", oursMedian))
print(String(format: "ratio ours/baseline: %.2f×  (goal ≥ 0.70×)", baselineMedian / oursMedian))
