import Foundation
import TransportCore
import XMPP

/// How relayed messages look on local outputs: `{sender}: {body}`, or one JSON object
/// with channel, from, body, subject, type and id, and when present `url` (a file),
/// `replace_id` (a correction, XEP-0308), `reply_to` (XEP-0461), `reaction` (`{"id",
/// "emojis"}`, XEP-0444), `retract_id` (XEP-0424) and `encrypted` (the encryption of a
/// message the bridge could not read); ids are those this output was given.
public enum LocalOutputLine {
    struct Record: Encodable {
        var channel: String
        var from: String
        var source: String
        var body: String
        var subject: String?
        var type: String
        var id: String
        var url: String?
        var replaceID: String?
        var replyTo: String?
        var reaction: Reaction?
        var retractID: String?
        var encrypted: String?

        /// Reactions (XEP-0444): the message reacted to and the sender's reactions now.
        struct Reaction: Encodable {
            var id: String
            var emojis: [String]
        }

        enum CodingKeys: String, CodingKey {
            case channel, from, source, body, subject, type, id, url, reaction, encrypted
            case replaceID = "replace_id"
            case replyTo = "reply_to"
            case retractID = "retract_id"
        }
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
        var record = Record(
            channel: delivery.channel, from: delivery.nick, source: delivery.source.description, body: delivery.originalBody,
            subject: delivery.subject, type: delivery.type.rawValue, id: delivery.relayID
        )
        let content = delivery.content
        record.url = content.url
        record.replaceID = content.replaceID
        record.replyTo = content.replyTo
        record.reaction = content.reactionTo.map { Record.Reaction(id: $0, emojis: content.reactions ?? []) }
        record.retractID = content.retractID
        record.encrypted = content.encryption
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(record)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
