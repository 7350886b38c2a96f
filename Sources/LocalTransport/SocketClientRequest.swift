import Foundation
import TransportCore
import XMPP

/// One JSON line from a Unix-socket client: a message
/// (`{"channel":…, "body":…, "type":…, "subject":…}`, optionally `url`, `replace_id`,
/// `reply_to`, `reaction` (`{"id","emojis"}`) or `retract_id`) or a subscription change
/// (`{"subscribe":["alerts"]}`, `{"unsubscribe":[…]}`).
public struct SocketClientRequest: Decodable, Sendable {
    var channel: String?
    var body: String?
    var type: String?
    var subject: String?
    var subscribe: [String]?
    var unsubscribe: [String]?
    /// Answer `{"ok":"queued","id":…}` once the message is committed to the journal, so a
    /// client knows what survives a crash (issue 8).
    var ack: Bool?
    /// Rich messages (issue 12): a file's URL, a correction, a reply, reactions, a retraction.
    var rich = LocalRichFields()

    enum CodingKeys: String, CodingKey {
        case channel, body, type, subject, subscribe, unsubscribe, ack
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.channel = try container.decodeIfPresent(String.self, forKey: .channel)
        self.body = try container.decodeIfPresent(String.self, forKey: .body)
        self.type = try container.decodeIfPresent(String.self, forKey: .type)
        self.subject = try container.decodeIfPresent(String.self, forKey: .subject)
        self.subscribe = try container.decodeIfPresent([String].self, forKey: .subscribe)
        self.unsubscribe = try container.decodeIfPresent([String].self, forKey: .unsubscribe)
        self.ack = try container.decodeIfPresent(Bool.self, forKey: .ack)
        self.rich = try LocalRichFields(from: decoder)
    }

    /// What the line carries besides its text.
    var content: MessageContent { self.rich.content }
}

extension SocketClientRequest {
    /// The request in one JSON line; nil when it is not a JSON object of this shape.
    public static func decode(_ line: String) -> SocketClientRequest? {
        try? JSONDecoder().decode(SocketClientRequest.self, from: Data(line.utf8))
    }
}
