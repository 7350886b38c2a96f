import Foundation
import TransportCore

/// One message as the local archive keeps it (issue 25): what a channel relayed, or what
/// the bridge itself said into it (notices, digests, paging answers), with the ids it had
/// on each side. Encoded (JSON) as `history --json` prints it and
/// `GET /channels/{channel}/messages` answers it.
public struct ArchivedMessage: Hashable, Sendable, Codable {
    /// A copy the message was relayed as: where it went, and the id it went with.
    public struct Copy: Hashable, Sendable, Codable {
        public var target: Endpoint
        public var id: String

        public init(target: Endpoint, id: String) {
            self.target = target
            self.id = id
        }

        enum CodingKeys: String, CodingKey {
            case target = "to"
            case id
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.target = Endpoint(description: try container.decode(String.self, forKey: .target))
            self.id = try container.decode(String.self, forKey: .id)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.target.description, forKey: .target)
            try container.encode(self.id, forKey: .id)
        }
    }

    /// The archive's own number for it, increasing (0 before it is stored): the cursor.
    public var number: Int64 = 0
    public var at: Date
    public var channel: String
    public var source: Endpoint
    /// The sender's full address as received (a full JID, a room occupant, a local client).
    public var sender: String
    public var nick: String
    /// The id the source gave it.
    public var sourceID: String
    /// The text as the sender wrote it: before the channel's `replace` rules, after any
    /// correction; empty once retracted.
    public var body: String
    public var subject: String?
    /// What it carried besides text (a file's URL, a reply, reactions).
    public var content = MessageContent()
    public var copies: [Copy] = []
    /// Said by the bridge, not relayed from anyone.
    public var bridgeMade = false
    public var editedAt: Date?
    public var retractedAt: Date?

    public init(
        at: Date, channel: String, source: Endpoint, sender: String, nick: String, sourceID: String, body: String, subject: String? = nil,
        content: MessageContent = MessageContent(), copies: [Copy] = [], bridgeMade: Bool = false
    ) {
        self.at = at
        self.channel = channel
        self.source = source
        self.sender = sender
        self.nick = nick
        self.sourceID = sourceID
        self.body = body
        self.subject = subject
        self.content = content
        self.copies = copies
        self.bridgeMade = bridgeMade
    }

    enum CodingKeys: String, CodingKey {
        case number, at, channel, source, sender, nick
        case sourceID = "id"
        case body, subject, content, copies
        case bridgeMade = "bridge_made"
        case editedAt = "edited_at"
        case retractedAt = "retracted_at"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.number = try container.decode(Int64.self, forKey: .number)
        self.at = try container.decode(Date.self, forKey: .at)
        self.channel = try container.decode(String.self, forKey: .channel)
        self.source = Endpoint(description: try container.decode(String.self, forKey: .source))
        self.sender = try container.decode(String.self, forKey: .sender)
        self.nick = try container.decode(String.self, forKey: .nick)
        self.sourceID = try container.decode(String.self, forKey: .sourceID)
        self.body = try container.decode(String.self, forKey: .body)
        self.subject = try container.decodeIfPresent(String.self, forKey: .subject)
        self.content = try container.decodeIfPresent(MessageContent.self, forKey: .content) ?? MessageContent()
        self.copies = try container.decodeIfPresent([Copy].self, forKey: .copies) ?? []
        self.bridgeMade = try container.decodeIfPresent(Bool.self, forKey: .bridgeMade) ?? false
        self.editedAt = try container.decodeIfPresent(Date.self, forKey: .editedAt)
        self.retractedAt = try container.decodeIfPresent(Date.self, forKey: .retractedAt)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.number, forKey: .number)
        try container.encode(self.at, forKey: .at)
        try container.encode(self.channel, forKey: .channel)
        try container.encode(self.source.description, forKey: .source)
        try container.encode(self.sender, forKey: .sender)
        try container.encode(self.nick, forKey: .nick)
        try container.encode(self.sourceID, forKey: .sourceID)
        try container.encode(self.body, forKey: .body)
        try container.encodeIfPresent(self.subject, forKey: .subject)
        if !self.content.isEmpty { try container.encode(self.content.withoutWantsReceipt, forKey: .content) }
        try container.encode(self.copies, forKey: .copies)
        try container.encode(self.bridgeMade, forKey: .bridgeMade)
        try container.encodeIfPresent(self.editedAt, forKey: .editedAt)
        try container.encodeIfPresent(self.retractedAt, forKey: .retractedAt)
    }

    /// One JSON line (``jsonEncoder()``).
    public var jsonLine: String {
        (try? Self.jsonEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// How archived messages are written as JSON: sorted keys, slashes as they are, times
    /// in ISO 8601 with milliseconds, UTC (`2026-11-26T10:00:05.123Z`).
    public static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)))
        }
        return encoder
    }
}
