/// The user's roster (RFC 6121 §2) as the client last learned it, with the version
/// string of roster versioning (RFC 6121 §2.6, originally XEP-0237).
///
/// A value with no I/O: build the payloads of roster requests with ``query(version:versioning:)``,
/// ``setItem(_:)`` and ``removeItem(_:)``, then feed the answers to ``applyResult(_:)``
/// and every server push to ``applyPush(_:ownJID:)``.
public struct Roster: Hashable, Sendable {
    /// The roster namespace (RFC 6121 §2.1).
    public static let namespace = "jabber:iq:roster"
    /// The stream feature `<ver xmlns='urn:xmpp:features:rosterver'/>` with which a
    /// server advertises roster versioning (RFC 6121 §2.6.1).
    public static let versioningFeature = "urn:xmpp:features:rosterver"

    /// What a roster push did (RFC 6121 §2.1.6).
    ///
    /// For `applied` and `removed` the client answers the push with an empty IQ
    /// result (`iq.result()`). For `rejected` it sends nothing to the roster: a push
    /// from anyone but the user's own account MUST be ignored (RFC 6121 §2.1.6);
    /// answering a malformed push with `bad-request` is acceptable.
    public enum PushOutcome: Hashable, Sendable {
        /// The item was added or replaced.
        case applied(RosterItem)
        /// The item with this bare JID was removed (`subscription='remove'`).
        case removed(JID)
        /// The push was not applied; the roster is unchanged.
        case rejected(reason: String)
    }

    /// The items, keyed by the contact's bare JID.
    public var items: [JID: RosterItem]
    /// The version of `items` (RFC 6121 §2.6); `nil` when the server does not version
    /// the roster or nothing has been fetched.
    public var version: String?

    public init(items: [JID: RosterItem] = [:], version: String? = nil) {
        self.items = items
        self.version = version
    }

    /// The `<query xmlns='jabber:iq:roster'/>` payload of a roster get (RFC 6121 §2.2).
    ///
    /// With `versioning` (the server advertised ``versioningFeature``) the query carries
    /// `ver`: the cached `version`, or the empty string when there is no cache, which
    /// asks for the full roster (RFC 6121 §2.6.2). Without it no `ver` is sent.
    public static func query(version: String?, versioning: Bool) -> XMLElement {
        var query = XMLElement(name: "query", namespace: Self.namespace)
        if versioning { query[attribute: "ver"] = version ?? "" }
        return query
    }

    /// The payload of a roster set that adds or updates `item` (RFC 6121 §2.3).
    ///
    /// `subscription` and `ask` belong to the server, so they are left out (RFC 6121
    /// §2.1.2.2, §2.1.2.5, §2.1.5); an item whose subscription is `remove` becomes ``removeItem(_:)``.
    public static func setItem(_ item: RosterItem) -> XMLElement {
        switch item.subscription {
        case .remove:
            return Self.removeItem(item.jid)
        case .none, .to, .from, .both:
            var element = item.element
            element[attribute: "subscription"] = nil
            element[attribute: "ask"] = nil
            return Self.query(containing: element)
        }
    }

    /// The payload of a roster set that deletes the item for `jid` (RFC 6121 §2.5):
    /// `<item jid=… subscription='remove'/>`.
    public static func removeItem(_ jid: JID) -> XMLElement {
        let item = XMLElement(
            name: "item", namespace: Self.namespace,
            attributes: [
                XMLAttribute(name: "jid", value: jid.bare.description),
                XMLAttribute(name: "subscription", value: RosterItem.Subscription.remove.rawValue),
            ]
        )
        return Self.query(containing: item)
    }

    /// Applies the answer to a roster get (RFC 6121 §2.2, §2.6.3).
    ///
    /// A result carrying a query replaces every item and takes its `ver` as the new
    /// `version` (none when absent). A result without a query means the cached roster
    /// is current (the versioned "no changes" answer), so nothing changes. Items that
    /// cannot be read, or that say `subscription='remove'`, are skipped rather than
    /// failing the whole roster: one contact address this library cannot prepare must
    /// not hide the others.
    ///
    /// Throws ``StanzaParseError/invalidType(_:)`` for anything but a result (an error
    /// answer is the caller's to report) and ``StanzaParseError/invalidPayload`` for a
    /// payload other than a roster query.
    public mutating func applyResult(_ iq: IQ) throws(StanzaParseError) {
        switch iq.type {
        case .result:
            break
        case .get, .set, .error:
            throw .invalidType(iq.type.rawValue)
        }
        guard let query = iq.payload else { return }
        guard Self.isRosterQuery(query) else { throw .invalidPayload }
        var items: [JID: RosterItem] = [:]
        for child in Self.itemElements(of: query) {
            guard let item = try? RosterItem(element: child) else { continue }
            switch item.subscription {
            case .remove:
                continue
            case .none, .to, .from, .both:
                items[item.jid] = item
            }
        }
        self.items = items
        self.version = query[attribute: "ver"]
    }

    /// Applies a roster push: an IQ set from the server announcing one changed item
    /// (RFC 6121 §2.1.6, §2.6.3).
    ///
    /// The push is accepted only when it has no `from` or its `from` is exactly the
    /// user's bare JID; a push from a contact, another server or even one of the
    /// user's own full JIDs is rejected, since anyone could forge it. It must carry a
    /// roster query with exactly one readable item. An accepted push's `ver`, when
    /// present, becomes the new `version`.
    public mutating func applyPush(_ iq: IQ, ownJID: JID) -> PushOutcome {
        switch iq.type {
        case .set:
            break
        case .get, .result, .error:
            return .rejected(reason: "a roster push is an iq of type 'set', not '\(iq.type.rawValue)'")
        }
        if let from = iq.from, from != ownJID.bare {
            return .rejected(reason: "roster push from '\(from)', which is not the account's bare JID '\(ownJID.bare)'")
        }
        guard let query = iq.payload, Self.isRosterQuery(query) else {
            return .rejected(reason: "roster push without a jabber:iq:roster query")
        }
        let elements = Self.itemElements(of: query)
        guard elements.count == 1 else {
            return .rejected(reason: "roster push with \(elements.count) items; exactly one is allowed")
        }
        let item: RosterItem
        do {
            item = try RosterItem(element: elements[0])
        } catch {
            return .rejected(reason: "unreadable roster item: \(error)")
        }
        if let version = query[attribute: "ver"] { self.version = version }
        switch item.subscription {
        case .remove:
            self.items[item.jid] = nil
            return .removed(item.jid)
        case .none, .to, .from, .both:
            self.items[item.jid] = item
            return .applied(item)
        }
    }

    private static func query(containing item: XMLElement) -> XMLElement {
        XMLElement(name: "query", namespace: Self.namespace, children: [.element(item)])
    }

    private static func isRosterQuery(_ element: XMLElement) -> Bool {
        element.name == "query" && element.namespace == Self.namespace
    }

    private static func itemElements(of query: XMLElement) -> [XMLElement] {
        query.elements.filter { $0.name == "item" && $0.namespace == Self.namespace }
    }
}
