import Foundation

/// Someone took an alert the bridge paged them with: by a reply to it (XEP-0461, or
/// "ack" as the next message), a reaction to it (XEP-0444) or, where the channel counts
/// it, a displayed marker (XEP-0333). Told to the channel's local subscribers.
public struct AlertAck: Hashable, Sendable, Codable {
    /// How: "reply", "reaction", "displayed" or "command" (a plain "ack").
    public var how: String
    /// Who: the recipient's bare JID.
    public var by: String
    public var at: Date

    public init(how: String, by: String, at: Date) {
        self.how = how
        self.by = by
        self.at = at
    }

    /// `{"event":"acknowledged","channel":…,"id":…,"by":…,"how":…,"at":…}` for a local
    /// subscriber; `id` is the alert's id as its source knows it.
    public func jsonLine(channel: String, id: String) -> String {
        struct Record: Encodable {
            var event = "acknowledged"
            var channel: String
            var id: String
            var by: String
            var how: String
            var at: String
        }
        return PresenceEventLine.encode(Record(channel: channel, id: id, by: self.by, how: self.how, at: Self.timestamp(self.at)))
    }

    enum CodingKeys: String, CodingKey {
        case how, by, at
    }

    /// `at` as RFC 3339 text, as the HTTP ingress shows it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.how, forKey: .how)
        try container.encode(self.by, forKey: .by)
        try container.encode(Self.timestamp(self.at), forKey: .at)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.how = try container.decode(String.self, forKey: .how)
        self.by = try container.decode(String.self, forKey: .by)
        let text = try container.decode(String.self, forKey: .at)
        guard let at = ISO8601DateFormatter().date(from: text) else {
            throw DecodingError.dataCorruptedError(forKey: .at, in: container, debugDescription: "not an RFC 3339 time: \(text)")
        }
        self.at = at
    }

    /// RFC 3339 in UTC, whole seconds.
    public static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
