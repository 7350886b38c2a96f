/// One contact on the user's roster (RFC 6121 §2.1.2): the contact's bare JID, a
/// display name, groups, the subscription state and whether a subscription request
/// is pending.
///
/// Items are read from and written as `<item xmlns='jabber:iq:roster'/>`. The
/// `jid` is always a bare JID: an item whose `jid` carries a resourcepart is
/// refused, because the roster is keyed by bare JID and presence subscriptions are
/// between bare JIDs (RFC 6121 §3.1.1).
public struct RosterItem: Hashable, Sendable {
    /// The `subscription` attribute (RFC 6121 §2.1.2.5); `remove` appears only in
    /// roster sets and pushes that delete the item (RFC 6121 §2.5).
    public enum Subscription: String, Hashable, Sendable, CaseIterable {
        case none
        case to
        case from
        case both
        case remove
    }

    /// The contact's bare JID (RFC 6121 §2.1.2.3).
    public var jid: JID
    /// The user-assigned name (RFC 6121 §2.1.2.4); an empty `name` reads as `nil`.
    public var name: String?
    /// The groups the item belongs to (RFC 6121 §2.1.2.6), in document order,
    /// without duplicates or empty names.
    public var groups: [String]
    public var subscription: Subscription
    /// `ask='subscribe'`: the user has sent a subscription request the contact has
    /// not yet answered (RFC 6121 §2.1.2.2).
    public var askSubscribe: Bool

    public init(
        jid: JID,
        name: String? = nil,
        groups: [String] = [],
        subscription: Subscription = .none,
        askSubscribe: Bool = false
    ) {
        self.jid = jid
        self.name = name
        self.groups = Self.cleaned(groups)
        self.subscription = subscription
        self.askSubscribe = askSubscribe
    }

    /// Reads an `<item/>` child of a roster query (RFC 6121 §2.1.2).
    ///
    /// Throws ``StanzaParseError/invalidAddress(attribute:value:_:)`` for a `jid`
    /// that is not a JID, and ``StanzaParseError/invalidPayload`` for anything else
    /// that makes the item unusable: not an `item` in `jabber:iq:roster`, no `jid`,
    /// a `jid` with a resourcepart, or an unknown `subscription` value. A missing
    /// `subscription` means `none`; an `ask` other than `subscribe` is ignored.
    public init(element: XMLElement) throws(StanzaParseError) {
        guard element.name == "item", element.namespace == Roster.namespace else { throw .invalidPayload }
        guard let rawJID = element[attribute: "jid"] else { throw .invalidPayload }
        let jid: JID
        do {
            jid = try JID(rawJID)
        } catch {
            throw .invalidAddress(attribute: "jid", value: String(rawJID.prefix(100)), error)
        }
        guard jid.isBare else { throw .invalidPayload }
        let subscription: Subscription
        if let rawSubscription = element[attribute: "subscription"] {
            guard let parsed = Subscription(rawValue: rawSubscription) else { throw .invalidPayload }
            subscription = parsed
        } else {
            subscription = .none
        }
        let name = element[attribute: "name"]
        self.init(
            jid: jid,
            name: name?.isEmpty == false ? name : nil,
            groups: element.elements.filter { $0.name == "group" && $0.namespace == Roster.namespace }.map(\.text),
            subscription: subscription,
            askSubscribe: element[attribute: "ask"] == "subscribe"
        )
    }

    /// The item as `<item xmlns='jabber:iq:roster'/>`, with every attribute this
    /// value holds (as a server writes it in results and pushes).
    public var element: XMLElement {
        var element = XMLElement(name: "item", namespace: Roster.namespace)
        element[attribute: "jid"] = self.jid.description
        element[attribute: "name"] = self.name
        element[attribute: "subscription"] = self.subscription.rawValue
        if self.askSubscribe { element[attribute: "ask"] = "subscribe" }
        for group in Self.cleaned(self.groups) {
            var child = XMLElement(name: "group", namespace: Roster.namespace)
            child.append(text: group)
            element.append(child)
        }
        return element
    }

    /// `groups` in order, without empty names or repeats (RFC 6121 §2.1.2.6, §2.3.3).
    private static func cleaned(_ groups: [String]) -> [String] {
        var seen = Set<String>()
        return groups.filter { !$0.isEmpty && seen.insert($0).inserted }
    }
}
