/// The id the place that keeps a message gave it: a server's archive or a room, unique
/// and stable there (XMPP: XEP-0359 §3 `<stanza-id id by/>`, which XEP-0313 §4 uses as the
/// archive's result id and XEP-0045 rooms as the message's id in the room).
///
/// One type for it end to end: the XMPP library reads it from stanzas and archives, the
/// core carries it on an inbound message and a copy's reflection, the state keeps it in
/// the relay rows' `source_stanza_id` and `copy_stanza_id`, and replies, reactions and
/// retractions in a room refer to it. It is not the stanza's own `id` (the sender's) nor
/// the relay id the bridge gives a delivery.
public struct StanzaID: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The id as the archive or room wrote it.
    public let rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// A literal id (tests, fixed vectors).
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }

    public var description: String { self.rawValue }
}
