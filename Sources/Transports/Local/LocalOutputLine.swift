import Foundation
import XMPP

/// How relayed messages look on local outputs: `{sender}: {body}`, or one JSON object
/// with channel, from, body, subject, type and id.
public enum LocalOutputLine {
    struct Record: Encodable {
        var channel: String
        var from: String
        var source: String
        var body: String
        var subject: String?
        var type: String
        var id: String
    }

    public static func render(_ delivery: Delivery, as format: StdioTransport.OutputFormat) -> String {
        switch format {
        case .text:
            // One line per message (embedded newlines would split it for line-based
            // readers), and no control character from a remote sender reaches the terminal.
            return "\(VisibleText.escaped(delivery.nick, newline: " ")): \(VisibleText.escaped(delivery.originalBody, newline: " ⏎ "))"
        case .json:
            return self.json(delivery)
        }
    }

    public static func json(_ delivery: Delivery) -> String {
        let record = Record(
            channel: delivery.channel, from: delivery.nick, source: delivery.source.description, body: delivery.originalBody,
            subject: delivery.subject, type: delivery.type.rawValue, id: delivery.relayID
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
