import Foundation

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
    public var number: Int64 {
        _read { yield self.box.fields.number }
        set { self.fields.number = newValue }
    }
    public var at: Date {
        _read { yield self.box.fields.at }
        set { self.fields.at = newValue }
    }
    public var channel: String {
        _read { yield self.box.fields.channel }
        set { self.fields.channel = newValue }
    }
    public var source: Endpoint {
        _read { yield self.box.fields.source }
        set { self.fields.source = newValue }
    }
    /// The sender's full address as received (a full JID, a room occupant, a local client).
    public var sender: String {
        _read { yield self.box.fields.sender }
        set { self.fields.sender = newValue }
    }
    public var nick: String {
        _read { yield self.box.fields.nick }
        set { self.fields.nick = newValue }
    }
    /// The id the source gave it.
    public var sourceID: String {
        _read { yield self.box.fields.sourceID }
        set { self.fields.sourceID = newValue }
    }
    /// The text as the sender wrote it: before the channel's `replace` rules, after any
    /// correction; empty once retracted.
    public var body: String {
        _read { yield self.box.fields.body }
        set { self.fields.body = newValue }
    }
    public var subject: String? {
        _read { yield self.box.fields.subject }
        set { self.fields.subject = newValue }
    }
    /// What it carried besides text (a file's URL, a reply, reactions).
    public var content: MessageContent {
        _read { yield self.box.fields.content }
        set { self.fields.content = newValue }
    }
    public var copies: [Copy] {
        _read { yield self.box.fields.copies }
        set { self.fields.copies = newValue }
    }
    /// Said by the bridge, not relayed from anyone.
    public var bridgeMade: Bool {
        _read { yield self.box.fields.bridgeMade }
        set { self.fields.bridgeMade = newValue }
    }
    public var editedAt: Date? {
        _read { yield self.box.fields.editedAt }
        set { self.fields.editedAt = newValue }
    }
    public var retractedAt: Date? {
        _read { yield self.box.fields.retractedAt }
        set { self.fields.retractedAt = newValue }
    }

    /// The values. A message passes through several hands on the relay path (the archive's
    /// entry, the intake log, the journal's INSERT), and copying a dozen strings each time
    /// was a measurable part of the archive's cost: copies share one box until one of them
    /// changes (copy on write).
    @usableFromInline var box: Box

    @usableFromInline struct Fields: Hashable {
        @usableFromInline var number: Int64 = 0
        @usableFromInline var at: Date
        @usableFromInline var channel: String
        @usableFromInline var source: Endpoint
        @usableFromInline var sender: String
        @usableFromInline var nick: String
        @usableFromInline var sourceID: String
        @usableFromInline var body: String
        @usableFromInline var subject: String?
        @usableFromInline var content: MessageContent
        @usableFromInline var copies: [Copy]
        @usableFromInline var bridgeMade: Bool
        @usableFromInline var editedAt: Date?
        @usableFromInline var retractedAt: Date?
    }

    /// Changed only through ``fields``, which copies it first unless this message is its
    /// only holder: no two threads ever see it change, so its accesses need no run-time
    /// exclusivity check either. Read in place (inlinable getters) on the journal's thread.
    @usableFromInline final class Box: @unchecked Sendable {
        @exclusivity(unchecked) @usableFromInline var fields: Fields

        init(_ fields: Fields) { self.fields = fields }
    }

    private var fields: Fields {
        get { self.box.fields }
        _modify {
            if !isKnownUniquelyReferenced(&self.box) { self.box = Box(self.box.fields) }
            yield &self.box.fields
        }
    }

    public init(
        at: Date, channel: String, source: Endpoint, sender: String, nick: String, sourceID: String, body: String, subject: String? = nil,
        content: MessageContent = MessageContent(), copies: [Copy] = [], bridgeMade: Bool = false
    ) {
        self.box = Box(
            Fields(
                at: at, channel: channel, source: source, sender: sender, nick: nick, sourceID: sourceID, body: body, subject: subject, content: content,
                copies: copies, bridgeMade: bridgeMade
            )
        )
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }

    public func hash(into hasher: inout Hasher) {
        self.box.fields.hash(into: &hasher)
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
        self.init(
            at: try container.decode(Date.self, forKey: .at), channel: try container.decode(String.self, forKey: .channel),
            source: Endpoint(description: try container.decode(String.self, forKey: .source)), sender: try container.decode(String.self, forKey: .sender),
            nick: try container.decode(String.self, forKey: .nick), sourceID: try container.decode(String.self, forKey: .sourceID),
            body: try container.decode(String.self, forKey: .body), subject: try container.decodeIfPresent(String.self, forKey: .subject),
            content: try container.decodeIfPresent(MessageContent.self, forKey: .content) ?? MessageContent(),
            copies: try container.decodeIfPresent([Copy].self, forKey: .copies) ?? [],
            bridgeMade: try container.decodeIfPresent(Bool.self, forKey: .bridgeMade) ?? false
        )
        self.number = try container.decode(Int64.self, forKey: .number)
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
        if !self.content.isEmpty { try container.encode(self.content, forKey: .content) }
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
