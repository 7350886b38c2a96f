import Foundation

/// Looks up in-doubt messages in an archive (XEP-0313 §4, paged backwards with Result Set
/// Management, XEP-0059 §2.5) after the server lost a session with them unacknowledged
/// (XEP-0198 §5 `<failed/>`): a server archives what the account sent, with its origin-id
/// (XEP-0359 §3), and a room (XEP-0313 on the room's JID, XEP-0045) what was said in it, so
/// an in-doubt message found there reached the server (the room) and must not be sent
/// again; the rest must.
///
/// Pure: it builds the queries and reads results and answers; ``XMPPSession`` sends them.
/// The archive is read from its end (the in-doubt messages are the newest the account
/// sent), a page at a time, until every in-doubt id is found, the page limit is reached,
/// or the archive has nothing older than the window (`start`: the oldest in-doubt send
/// time less ``Configuration/clockSkew``). Results count only from the archive asked (no
/// `from`, or its bare JID), for the query under way, and for messages from that bare JID
/// (ours; in a room's archive, an occupant's: the origin-id tells ours).
public struct ArchiveCheckStateMachine: Sendable {
    /// How the check reads the archive: page size, page limit, clock skew allowed, and how
    /// often a query the server could not answer for now is asked again.
    public struct Configuration: Hashable, Sendable {
        /// Results asked for per page (Prosody sends at most 50).
        public var pageSize: Int
        /// Pages read at most; what is still not found then is sent again.
        public var maximumPages: Int
        /// How far the server's clock may be behind ours: the window starts this much
        /// before the oldest in-doubt message was sent.
        public var clockSkew: Duration
        /// How many times a query that failed for now (a transient error: a server just
        /// restarted answers `internal-server-error` while its archive opens) is asked
        /// again before everything in doubt is sent again.
        public var retries: Int
        /// The wait before the first retry; each further one waits this much longer.
        public var retryDelay: Duration

        /// How long after a resumption (XEP-0198 §5) whose `h` did not count all that was
        /// written the archive is asked about the rest, on a server that may still route
        /// it (not ``handlesOneStanzaAtATime(software:)``); zero: it is sent again at once.
        public var uncountedSettleDelay: Duration

        public init(
            pageSize: Int = 50, maximumPages: Int = 100, clockSkew: Duration = .seconds(60), retries: Int = 2, retryDelay: Duration = .seconds(1),
            uncountedSettleDelay: Duration = .seconds(1)
        ) {
            self.pageSize = pageSize
            self.maximumPages = maximumPages
            self.clockSkew = clockSkew
            self.retries = retries
            self.retryDelay = retryDelay
            self.uncountedSettleDelay = uncountedSettleDelay
        }
    }

    /// What the owner does next.
    public enum Action: Hashable, Sendable {
        /// Send this request; answer with ``answered(_:nextQueryID:)`` or
        /// ``failed(_:error:nextQueryID:)``.
        case query(IQ)
        /// Wait `after`, then send this request (the failed page again, under a new query
        /// id); answer it as a ``query(_:)``. `because`: why the last one failed.
        case retry(IQ, after: Duration, because: String)
        /// Done: `archived` reached the server; the other in-doubt ids must be sent again.
        case finished(archived: Set<String>, pages: Int, ending: Ending)
    }

    /// Why the check ended.
    public enum Ending: Hashable, Sendable, CustomStringConvertible {
        case nothingInDoubt
        case allFound
        /// The archive has nothing older in the window.
        case windowExhausted
        case pageLimit(pages: Int)
        /// The archive could not be read (the server's error, or no answer): nothing is
        /// known to have arrived.
        case archiveUnreadable(String)

        public var description: String {
            switch self {
            case .nothingInDoubt: "nothing in doubt"
            case .allFound: "all found"
            case .windowExhausted: "the archive has nothing older in the window"
            case .pageLimit(let pages): "stopped after \(pages) pages"
            case .archiveUnreadable(let why): "archive unreadable: \(why)"
            }
        }
    }

    enum State: Hashable, Sendable {
        case idle
        /// A page's query under way: the page ends before `before`, `failures` earlier
        /// queries for it failed.
        case querying(queryID: String, pages: Int, before: String?, failures: Int)
        case finished
    }

    public let configuration: Configuration
    /// Whose archive: the account's bare JID, or a room's.
    public let archive: JID
    /// Whether `archive` is a room's (the query is addressed to it).
    let isRoom: Bool
    /// The in-doubt ids (origin-id, which is also the message id).
    public let inDoubt: Set<String>
    let since: Date?
    private(set) var state: State = .idle
    public private(set) var archived: Set<String> = []
    /// The newest in-doubt message found (the archive's order). A server that crashed may
    /// have archived it for us and died before routing it: the owner sends it again then.
    public private(set) var newestArchived: String?
    private var newestOnThisPage: String?
    /// The oldest result of the page under way (the next page ends before it).
    private var oldestResult: String?

    /// - Parameters:
    ///   - archive: the account's own JID, or (`room`) the room's.
    ///   - inDoubt: ids of the messages sent but not acknowledged.
    ///   - sentSince: when the oldest of them was sent (nil: unknown, e.g. after a restart).
    public init(archive: JID, room: Bool = false, inDoubt: Set<String>, sentSince: Date?, configuration: Configuration = Configuration()) {
        self.archive = archive.bare
        self.isRoom = room
        self.inDoubt = inDoubt
        self.since = sentSince.map { $0.addingTimeInterval(-Double(configuration.clockSkew.components.seconds)) }
        self.configuration = configuration
    }

    /// The query under way (its IQ id and queryid).
    public var currentQueryID: String? {
        if case .querying(let id, _, _, _) = self.state { return id }
        return nil
    }

    /// Starts the check with a fresh `queryID`.
    public mutating func start(queryID: String) -> Action {
        guard self.state == .idle else { return .finished(archived: self.archived, pages: 0, ending: .archiveUnreadable("started twice")) }
        guard !self.inDoubt.isEmpty else {
            self.state = .finished
            return .finished(archived: [], pages: 0, ending: .nothingInDoubt)
        }
        self.state = .querying(queryID: queryID, pages: 0, before: nil, failures: 0)
        return .query(self.query(id: queryID, before: nil))
    }

    /// Reads a received `<message/>`; true when it was a result of the query under way
    /// (the owner does nothing else with it).
    public mutating func received(_ element: XMLElement) -> Bool {
        guard element.name == "message", let result = element.firstChild(named: "result", namespace: ArchiveCatchUpStateMachine.namespace),
            case .querying(let queryID, _, _, _) = self.state, result[attribute: "queryid"] == queryID
        else { return false }
        // Someone else's "result" for our query id is swallowed, never believed.
        if let from = element[attribute: "from"], (try? JID(from)) != self.archive { return true }
        if let id = result[attribute: "id"], !id.isEmpty { self.oldestResult = self.oldestResult ?? id }
        guard let inner = result.firstChild(named: "forwarded", namespace: ArchiveCatchUpStateMachine.forwardNamespace)?
            .firstChild(named: "message", namespace: XMPPNamespace.client),
            let sender = inner[attribute: "from"].flatMap({ try? JID($0) }), sender.bare == self.archive
        else { return true }
        let originID = inner.firstChild(named: "origin-id", namespace: ArchiveCatchUpStateMachine.stanzaIDNamespace)?[attribute: "id"]
        // In a room, where others choose their message ids, only the origin-id is ours.
        for id in [originID, self.isRoom ? nil : inner[attribute: "id"]].compactMap({ $0 }) where self.inDoubt.contains(id) {
            self.archived.insert(id)
            // Results run oldest to newest within a page, pages newest first.
            if self.newestArchived == nil { self.newestOnThisPage = id }
            break
        }
        return true
    }

    /// The server answered the query under way (its `<fin/>`).
    public mutating func answered(_ iq: IQ, nextQueryID: String) -> Action? {
        guard case .querying(_, let pagesSoFar, _, _) = self.state else { return nil }
        let pages = pagesSoFar + 1
        if self.newestArchived == nil { self.newestArchived = self.newestOnThisPage }
        let fin = iq.payload.flatMap { $0.name == "fin" && $0.namespace == ArchiveCatchUpStateMachine.namespace ? $0 : nil }
        let complete = ["true", "1"].contains(fin?[attribute: "complete"] ?? "")
        let first = fin?.firstChild(named: "set", namespace: ArchiveCatchUpStateMachine.resultSetNamespace)?
            .firstChild(named: "first", namespace: ArchiveCatchUpStateMachine.resultSetNamespace)?.text ?? self.oldestResult
        if self.archived.count == self.inDoubt.count {
            return self.finish(pages: pages, ending: .allFound)
        }
        if complete || first == nil {
            return self.finish(pages: pages, ending: .windowExhausted)
        }
        guard pages < self.configuration.maximumPages, let first else {
            return self.finish(pages: pages, ending: .pageLimit(pages: pages))
        }
        self.oldestResult = nil
        self.state = .querying(queryID: nextQueryID, pages: pages, before: first, failures: 0)
        return .query(self.query(id: nextQueryID, before: first))
    }

    /// What the archive cannot vouch for, once the check is done: a server that restarted
    /// since the session was lost may have archived messages for us and died before
    /// routing them. One that handles one stanza at a time to the end (Prosody) can have
    /// left only the newest so; another (ejabberd routes between processes) any of them.
    /// `serverRestarted` nil: unknown, taken as restarted. A room's archive vouches for all
    /// it holds: the room archives a message as it takes it, and what is there is in the
    /// room (its occupants read it there), whatever the crash cut short after.
    public func uncertain(serverRestarted: Bool?, oneStanzaAtATime: Bool) -> Set<String> {
        guard serverRestarted != false, !self.isRoom else { return [] }
        guard oneStanzaAtATime else { return self.archived }
        return self.newestArchived.map { [$0] } ?? []
    }

    /// Whether a server, by its XEP-0092 name, handles each stanza to the end before the
    /// next (Prosody: one thread, synchronous archive writes), so a crash can cut short
    /// only the newest, and its `<resumed h/>` (XEP-0198 §5) counts all it took; unknown
    /// servers are taken not to. ejabberd's old session process can answer the resume
    /// before it parses bytes it had read from the dead connection, then routes them.
    public static func handlesOneStanzaAtATime(software: String?) -> Bool {
        software?.lowercased().hasPrefix("prosody") == true
    }

    /// The query under way failed: the server's `error` (nil: no answer, or none at all).
    /// One that may pass (RFC 6120 §8.3.2, ``StanzaError/isTransient``: a server just
    /// restarted answers `internal-server-error` while its archive opens) is asked again,
    /// the same page under a new `nextQueryID`, up to ``Configuration/retries`` times;
    /// otherwise nothing more is known.
    public mutating func failed(_ reason: String, error: StanzaError?, nextQueryID: String) -> Action? {
        guard case .querying(_, let pages, let before, let failures) = self.state else { return nil }
        guard error?.isTransient == true, failures < self.configuration.retries else {
            // The newest found so far counts, as it would have after an answer.
            if self.newestArchived == nil { self.newestArchived = self.newestOnThisPage }
            self.state = .finished
            let tries = failures + 1
            return .finished(archived: self.archived, pages: pages, ending: .archiveUnreadable(tries > 1 ? "\(reason) (asked \(tries) times)" : reason))
        }
        // The failed page's results start over; what it found stays found.
        self.oldestResult = nil
        self.newestOnThisPage = nil
        self.state = .querying(queryID: nextQueryID, pages: pages, before: before, failures: failures + 1)
        return .retry(self.query(id: nextQueryID, before: before), after: self.configuration.retryDelay * (failures + 1), because: reason)
    }

    private mutating func finish(pages: Int, ending: Ending) -> Action {
        self.state = .finished
        return .finished(archived: self.archived, pages: pages, ending: ending)
    }

    /// `<iq type='set'><query xmlns='urn:xmpp:mam:2' queryid='…'>`: the window's `start`,
    /// and the page that ends before `before` (the archive's last page when nil).
    private func query(id: String, before: String?) -> IQ {
        var query = XMLElement(name: "query", namespace: ArchiveCatchUpStateMachine.namespace, attributes: [XMLAttribute(name: "queryid", value: id)])
        var form = XMLElement(name: "x", namespace: ArchiveCatchUpStateMachine.dataFormsNamespace, attributes: [XMLAttribute(name: "type", value: "submit")])
        form.append(ArchiveCatchUpStateMachine.field("FORM_TYPE", ArchiveCatchUpStateMachine.namespace, hidden: true))
        if let since = self.since { form.append(ArchiveCatchUpStateMachine.field("start", ArchiveCatchUpStateMachine.timestamp(since), hidden: false)) }
        query.append(form)
        var set = XMLElement(name: "set", namespace: ArchiveCatchUpStateMachine.resultSetNamespace)
        var max = XMLElement(name: "max", namespace: ArchiveCatchUpStateMachine.resultSetNamespace)
        max.append(text: String(self.configuration.pageSize))
        set.append(max)
        var element = XMLElement(name: "before", namespace: ArchiveCatchUpStateMachine.resultSetNamespace)
        if let before { element.append(text: before) }
        set.append(element)
        query.append(set)
        return IQ(type: .set, id: id, to: self.isRoom ? self.archive : nil, payload: query)
    }
}
