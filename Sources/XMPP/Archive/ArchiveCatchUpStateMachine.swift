import Foundation
import StanzaIdentity

/// Catching up from the account's own message archive after a gap in the stream
/// (XEP-0313 §4, `urn:xmpp:mam:2`, paged with Result Set Management, XEP-0059 §2), as a pure
/// machine: it builds the queries, reads the results and says where the account's archive
/// cursor stands. It does no I/O; ``XMPPSession`` sends its queries and feeds it the answers.
///
/// - A gap opens whenever a stream starts without resuming the last one in this process
///   (a fresh session, a process start): while it is open, live messages do not move the
///   cursor, because older archived messages may still be unhandled.
/// - With a cursor, the archive is read page by page after it (and not before
///   `maximumAge`); each archived message carries the cursor its handling reaches. Our own
///   outgoing messages in the archive are skipped.
/// - Without one (first start), only the archive's last item is asked for, to learn where
///   it ends; nothing old is emitted. An empty archive gives a cursor in time.
/// - Results count only from our own archive (no `from`, or our bare JID) and for the query
///   under way (`queryid`); anything else is forged.
public struct ArchiveCatchUpStateMachine: Sendable {
    public static let namespace = "urn:xmpp:mam:2"
    static let resultSetNamespace = "http://jabber.org/protocol/rsm"
    static let forwardNamespace = "urn:xmpp:forward:0"
    static let dataFormsNamespace = "jabber:x:data"
    static let stanzaIDNamespace = "urn:xmpp:sid:0"

    public struct Configuration: Hashable, Sendable {
        /// Results asked for per page (servers may send fewer; Prosody's cap is 50).
        public var pageSize: Int
        /// Archived messages older than this are never emitted; nil: no limit.
        public var maximumAge: Duration?
        /// A catch-up stops after this many pages (the next gap starts where it stopped).
        public var maximumPages: Int
        /// Live messages held back while a catch-up is due or runs, at most
        /// (``LiveMessageHold``): past it, they go on before the catch-up ends.
        public var maximumHeldLiveMessages: Int

        public init(pageSize: Int = 100, maximumAge: Duration? = .seconds(7 * 86_400), maximumPages: Int = 1_000, maximumHeldLiveMessages: Int = 10_000) {
            self.pageSize = pageSize
            self.maximumAge = maximumAge
            self.maximumPages = maximumPages
            self.maximumHeldLiveMessages = maximumHeldLiveMessages
        }
    }

    enum State: Hashable, Sendable {
        /// The stream has not missed anything since the cursor.
        case continuous
        /// Something may have been missed; a catch-up is due.
        case gap
        /// Asking for the archive's last item (no cursor yet).
        case anchoring(queryID: String, startedAt: Date)
        /// Reading pages after the cursor.
        case querying(queryID: String, pages: Int, usedStoredCursor: Bool)
        /// The server keeps no archive for the account: nothing to catch up from.
        case unavailable
    }

    /// What the owner does next.
    public enum Action: Hashable, Sendable {
        /// Send this request; answer with ``answered(_:now:nextQueryID:)`` or ``failed(_:now:nextQueryID:)``.
        case query(IQ)
        /// Done: the cursor now stands here (persist it after the messages handed over before).
        case caughtUp(ArchiveCursor?, emitted: Int, pages: Int)
        /// Stopped; the gap stays open and the next fresh stream tries again.
        case gaveUp(String)
        /// The server has no archive for this account.
        case unavailable(String)
    }

    /// What a received message is to the machine.
    public enum Result: Hashable, Sendable {
        /// Not an archive result: an ordinary message.
        case notAResult
        /// An archived message to emit; once it is handled the cursor stands at `cursor`.
        case archived(Message, cursor: ArchiveCursor)
        /// A result with nothing to emit (our own message, the anchor, an unreadable one).
        case skipped
        /// Looks like a result, but not from our archive or not for our query.
        case forged(String)
    }

    /// Whose archive is read: the account's own (its 1:1 messages), or a room's (XEP-0313
    /// §5; `ownJID` is then the room's bare JID and only its groupchat messages count).
    public enum Owner: Hashable, Sendable {
        case account
        case room
    }

    public let configuration: Configuration
    public let owner: Owner
    let ownJID: JID
    public private(set) var cursor: ArchiveCursor?
    private(set) var state: State = .gap
    /// The newest live message's stanza-id while the gap is open.
    private var newestLive: StanzaID?
    /// The last result of the query under way.
    private(set) var lastResult: StanzaID?
    private var emitted = 0

    /// - Parameter cursor: the cursor stored by an earlier run (nil on the first).
    public init(ownJID: JID, cursor: ArchiveCursor?, configuration: Configuration = Configuration(), owner: Owner = .account) {
        self.owner = owner
        self.ownJID = ownJID.bare
        self.cursor = cursor
        self.configuration = configuration
    }

    /// Whether a catch-up is due (a gap is open and none runs).
    public var needsCatchUp: Bool { self.state == .gap }

    /// Whether the catch-up that is due will emit archived messages (there is a cursor to
    /// read after); without one it only learns where the archive ends.
    public var emitsOnCatchUp: Bool { self.needsCatchUp && self.cursor != nil }

    /// The query under way (its IQ id); answers to any other are stale.
    public var currentQueryID: String? {
        switch self.state {
        case .anchoring(let id, _), .querying(let id, _, _): id
        case .continuous, .gap, .unavailable: nil
        }
    }

    /// A stream started; `continuesLast` when it resumed this process's last stream
    /// (XEP-0198 §5), so nothing was missed.
    public mutating func streamStarted(continuesLast: Bool) {
        switch self.state {
        case .unavailable: return
        case .continuous where continuesLast: return
        case .continuous, .gap, .anchoring, .querying:
            // A query of an earlier connection can no longer be answered.
            self.state = .gap
        }
    }

    /// The connection ended while a query was under way (its answer can no longer come): the
    /// gap stays open, so the next stream, resumed or not, catches up again.
    public mutating func connectionLost() {
        switch self.state {
        case .anchoring, .querying: self.state = .gap
        case .continuous, .gap, .unavailable: break
        }
    }

    /// Messages the archive holds after the cursor were dropped before they were handled
    /// (live ones held for a catch-up that had ended, when the connection went): a gap is
    /// open again, whatever the next stream, so the next catch-up reads them.
    public mutating func reopenGap() {
        if self.state == .continuous { self.state = .gap }
    }

    /// Starts the catch-up; `queryID` must be fresh.
    public mutating func start(now: Date, queryID: String) -> Action? {
        guard self.state == .gap else { return nil }
        self.lastResult = nil
        self.newestLive = nil
        self.emitted = 0
        switch self.cursor {
        case nil:
            self.state = .anchoring(queryID: queryID, startedAt: now)
            return .query(self.query(id: queryID, start: nil, after: nil, last: true))
        case .after(let id):
            self.state = .querying(queryID: queryID, pages: 0, usedStoredCursor: true)
            return .query(self.query(id: queryID, start: self.oldest(now: now), after: id, last: false))
        case .since(let date):
            self.state = .querying(queryID: queryID, pages: 0, usedStoredCursor: false)
            let start = [date, self.oldest(now: now)].compactMap { $0 }.max()
            return .query(self.query(id: queryID, start: start, after: nil, last: false))
        }
    }

    /// A live (not archived) message with this stanza-id (``stanzaID(of:ownJID:)``): the
    /// cursor to store with it, or nil while a gap is open.
    public mutating func liveMessage(stanzaID: StanzaID?) -> ArchiveCursor? {
        guard let stanzaID else { return nil }
        switch self.state {
        case .continuous:
            self.cursor = .after(stanzaID)
            return self.cursor
        case .gap, .anchoring, .querying:
            self.newestLive = stanzaID
            return nil
        case .unavailable:
            return nil
        }
    }

    /// Reads a received `<message/>` element.
    public mutating func received(_ element: XMLElement) -> Result {
        guard element.name == "message", let result = element.firstChild(named: "result", namespace: Self.namespace) else { return .notAResult }
        let from = element[attribute: "from"]
        if let from, (try? JID(from)) != self.ownJID {
            return .forged("archive result from \(from), not from \(self.owner == .room ? "the room's" : "our own") archive")
        }
        if from == nil, self.owner == .room { return .forged("room archive result without a sender") }
        let queryID: String
        switch self.state {
        case .anchoring(let id, _), .querying(let id, _, _): queryID = id
        case .continuous, .gap, .unavailable: return .forged("archive result while no query of ours runs")
        }
        guard result[attribute: "queryid"] == queryID else { return .forged("archive result for query \(result[attribute: "queryid"] ?? "-"), not ours") }
        guard let id = result[attribute: "id"].flatMap({ $0.isEmpty ? nil : StanzaID($0) }) else { return .forged("archive result without an id") }
        self.lastResult = id
        guard case .querying = self.state else { return .skipped }
        self.cursor = .after(id)
        guard let inner = result.firstChild(named: "forwarded", namespace: Self.forwardNamespace)?.firstChild(named: "message", namespace: XMPPNamespace.client),
            let message = try? Message(element: inner), let sender = message.from
        else { return .skipped }
        switch (self.owner, message.type) {
        case (.account, .chat), (.account, .normal):
            // Our own outgoing messages are in our archive too.
            guard sender.bare != self.ownJID.bare else { return .skipped }
        case (.room, .groupchat):
            // Every occupant writes from the room's JID; ours are told apart by id later.
            break
        case (.account, _), (.room, _):
            return .skipped
        }
        self.emitted += 1
        return .archived(message, cursor: .after(id))
    }

    /// The server answered the query under way.
    public mutating func answered(_ iq: IQ, now: Date, nextQueryID: String) -> Action? {
        let fin = iq.payload.flatMap { $0.name == "fin" && $0.namespace == Self.namespace ? $0 : nil }
        let set = fin?.firstChild(named: "set", namespace: Self.resultSetNamespace)
        let last = set?.firstChild(named: "last", namespace: Self.resultSetNamespace).map { StanzaID($0.text) } ?? self.lastResult
        switch self.state {
        case .anchoring(_, let startedAt):
            return self.finish(at: self.newestLive.map(ArchiveCursor.after) ?? last.map(ArchiveCursor.after) ?? .since(startedAt), pages: 1)
        case .querying(_, let pages, _):
            let pages = pages + 1
            let complete = fin?[attribute: "complete"] == "true" || fin?[attribute: "complete"] == "1"
            if complete || self.lastResult == nil || last == nil {
                return self.finish(at: self.newestLive.map(ArchiveCursor.after) ?? self.cursor, pages: pages)
            }
            guard pages < self.configuration.maximumPages, let last else {
                self.state = .gap
                return .gaveUp("stopped after \(pages) pages; the next fresh stream goes on from there")
            }
            let queryID = nextQueryID
            self.lastResult = nil
            self.state = .querying(queryID: queryID, pages: pages, usedStoredCursor: false)
            return .query(self.query(id: queryID, start: self.oldest(now: now), after: last, last: false))
        case .continuous, .gap, .unavailable:
            return nil
        }
    }

    /// The query under way failed: `condition` is the server's error, nil when no answer came.
    public mutating func failed(_ condition: StanzaError.Condition?, now: Date, nextQueryID: String) -> Action? {
        let usedStoredCursor: Bool
        switch self.state {
        case .anchoring: usedStoredCursor = false
        case .querying(_, _, let used): usedStoredCursor = used
        case .continuous, .gap, .unavailable: return nil
        }
        switch condition {
        case .serviceUnavailable, .featureNotImplemented, .notAllowed:
            self.state = .unavailable
            return .unavailable("the server keeps no message archive for this account (\(condition?.rawValue ?? "-"))")
        case .itemNotFound where usedStoredCursor:
            // Our last stanza-id is gone (expired): read from the oldest age we take, or
            // else learn where the archive ends.
            self.state = .gap
            self.cursor = self.oldest(now: now).map(ArchiveCursor.since)
            return self.start(now: now, queryID: nextQueryID)
        default:
            self.state = .gap
            return .gaveUp("archive query failed: \(condition?.rawValue ?? "no answer")")
        }
    }

    private mutating func finish(at cursor: ArchiveCursor?, pages: Int) -> Action {
        self.cursor = cursor
        self.state = .continuous
        self.newestLive = nil
        self.lastResult = nil
        return .caughtUp(cursor, emitted: self.emitted, pages: pages)
    }

    private func oldest(now: Date) -> Date? {
        self.configuration.maximumAge.map { now.addingTimeInterval(-Double($0.components.seconds) - Double($0.components.attoseconds) / 1e18) }
    }

    /// `<iq type='set'><query xmlns='urn:xmpp:mam:2' queryid='…'>` with a data form for
    /// `start` (§4.1.1) and an RSM set: `max` and `after`, or the last item only.
    private func query(id: String, start: Date?, after: StanzaID?, last: Bool) -> IQ {
        var query = XMLElement(name: "query", namespace: Self.namespace, attributes: [XMLAttribute(name: "queryid", value: id)])
        var form = XMLElement(name: "x", namespace: Self.dataFormsNamespace, attributes: [XMLAttribute(name: "type", value: "submit")])
        form.append(Self.field("FORM_TYPE", Self.namespace, hidden: true))
        if let start { form.append(Self.field("start", Self.timestamp(start), hidden: false)) }
        query.append(form)
        var set = XMLElement(name: "set", namespace: Self.resultSetNamespace)
        var max = XMLElement(name: "max", namespace: Self.resultSetNamespace)
        max.append(text: last ? "1" : String(self.configuration.pageSize))
        set.append(max)
        if last {
            set.append(XMLElement(name: "before", namespace: Self.resultSetNamespace))
        } else if let after {
            var element = XMLElement(name: "after", namespace: Self.resultSetNamespace)
            element.append(text: after.rawValue)
            set.append(element)
        }
        query.append(set)
        return IQ(type: .set, id: id, payload: query)
    }

    static func field(_ name: String, _ value: String, hidden: Bool) -> XMLElement {
        var field = XMLElement(name: "field", namespace: Self.dataFormsNamespace, attributes: [XMLAttribute(name: "var", value: name)])
        if hidden { field[attribute: "type"] = "hidden" }
        var element = XMLElement(name: "value", namespace: Self.dataFormsNamespace)
        element.append(text: value)
        field.append(element)
        return field
    }

    /// XEP-0082 date-time in UTC, whole seconds.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0
        )
    }

    /// The stanza-id our server gave a live message (XEP-0359 §5): a `<stanza-id/>` whose
    /// `by` is our own bare JID. Others' are not trusted (anyone can write one).
    public static func stanzaID(of message: Message, ownJID: JID) -> StanzaID? {
        let own = ownJID.bare
        // Servers write `by` as the bare JID we bound, as is: compared as text first, and
        // parsed (stringprep, per message with an archive) only when the text differs.
        let ownText = own.description
        let element = message.extensions.first {
            guard $0.name == "stanza-id", $0.namespace == Self.stanzaIDNamespace, let by = $0[attribute: "by"] else { return false }
            return by == ownText || (try? JID(by)) == own
        }
        return element?[attribute: "id"].flatMap { $0.isEmpty ? nil : StanzaID($0) }
    }
}
