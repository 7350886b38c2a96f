import Foundation
import TransportCore

/// What to read from the local archive (issue 25): `xmpp-bridge history` and
/// `GET /channels/{channel}/messages`. Every condition narrows; none reads everything.
public struct ArchiveQuery: Hashable, Sendable {
    public var channel: String?
    /// Messages at or after / before this time.
    public var since: Date?
    public var until: Date?
    /// Words that must all appear in the text (full-text search, SQLite FTS5).
    public var search: String?
    /// With `search`: the best matches first (FTS5's bm25 rank), not the newest; no cursor.
    public var ranked = false
    /// The sender: a bare JID (any of its resources), a full address, or a local name.
    public var from: String?
    public var limit: Int
    /// Only messages older than the one with this number (the previous page's cursor).
    public var before: Int64?

    public init(channel: String? = nil, since: Date? = nil, until: Date? = nil, search: String? = nil, from: String? = nil, limit: Int = 50, before: Int64? = nil) {
        self.channel = channel
        self.since = since
        self.until = until
        self.search = search
        self.from = from
        self.limit = limit
        self.before = before
    }

    /// Most messages one read returns.
    public static let maximumLimit = 10_000
}

/// One page of an archive read: newest first (best first for a search), and the cursor
/// for the next, older page when there is one.
public struct ArchivePage: Hashable, Sendable, Encodable {
    public var messages: [ArchivedMessage]
    public var next: Int64?

    enum CodingKeys: String, CodingKey {
        case messages, next
    }

    /// `{"messages": […], "next": "CURSOR"}`, `next` only when there is an older page.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.messages, forKey: .messages)
        try container.encodeIfPresent(self.next.map(String.init), forKey: .next)
    }

    public init(messages: [ArchivedMessage], next: Int64?) {
        self.messages = messages
        self.next = next
    }
}

/// Reads the local archive; given to the HTTP ingress by the bridge, which keeps it.
public protocol ArchiveReading: Sendable {
    /// `query`'s page, read for the local transport `reader`: nil when the query names no
    /// channel `reader` is a member of (nobody reads a channel it is not in).
    func read(_ query: ArchiveQuery, for reader: String) async throws -> ArchivePage?
}
