import Foundation
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
    /// Rich messages (issue 12), with ids this client knows (its own messages' ids from
    /// `ack`, or the `id` of lines it received): a file's URL, a correction, a reply,
    /// reactions and a retraction.
    var url: String?
    var replaceID: String?
    var replyTo: String?
    var reaction: Reaction?
    var retractID: String?

    struct Reaction: Decodable, Sendable {
        var id: String
        var emojis: [String]
    }

    enum CodingKeys: String, CodingKey {
        case channel, body, type, subject, subscribe, unsubscribe, ack, url, reaction
        case replaceID = "replace_id"
        case replyTo = "reply_to"
        case retractID = "retract_id"
    }

    /// What the line carries besides its text.
    var content: RichContent {
        RichContent(
            url: self.url, replaceID: self.replaceID, replyTo: self.replyTo, reactionTo: self.reaction?.id, reactions: self.reaction?.emojis,
            retractID: self.retractID
        )
    }
}

extension SocketClientRequest {
    /// The request in one JSON line; nil when it is not a JSON object of this shape.
    public static func decode(_ line: String) -> SocketClientRequest? {
        try? JSONDecoder().decode(SocketClientRequest.self, from: Data(line.utf8))
    }
}
