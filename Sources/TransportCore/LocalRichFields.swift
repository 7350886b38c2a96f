
/// The rich-message fields a local client may put in a JSON message (socket lines, HTTP
/// bodies; issue 12), with ids it knows: its own messages' ids (from `ack` or the 202
/// answer) or the `id` of a line it received.
///
/// `{"url": …}` shares a file; `{"replace_id": …}` corrects (XEP-0308), `{"reply_to": …}`
/// answers (XEP-0461), `{"reaction": {"id": …, "emojis": […]}}` reacts (XEP-0444) and
/// `{"retract_id": …}` retracts (XEP-0424). Decoded from the same object as the message's
/// own fields.
public struct LocalRichFields: Decodable, Hashable, Sendable {
    public var url: String?
    public var replaceID: String?
    public var replyTo: String?
    public var reaction: Reaction?
    public var retractID: String?

    public struct Reaction: Decodable, Hashable, Sendable {
        public var id: String
        public var emojis: [String]
    }

    enum CodingKeys: String, CodingKey {
        case url, reaction
        case replaceID = "replace_id"
        case replyTo = "reply_to"
        case retractID = "retract_id"
    }

    public init() {}

    /// What the message carries besides its text.
    public var content: MessageContent {
        MessageContent(
            url: self.url, replaceID: self.replaceID, replyTo: self.replyTo, reactionTo: self.reaction?.id, reactions: self.reaction?.emojis,
            retractID: self.retractID
        )
    }
}
