import XMPP

/// Which puppets a user is offered, without I/O: the linked account's contacts as puppet
/// roster items, and the changes since the last offer as a XEP-0144 roster item exchange
/// (suggestions the user's client may accept) or as XEP-0356 roster pushes (written into
/// the user's roster by a privileged component).
public struct RosterOffer: Sendable {
    /// An offered item: the puppet, its name and groups.
    public struct Item: Hashable, Sendable {
        public var puppet: JID
        public var name: String?
        public var groups: [String]
    }

    public let puppets: PuppetAddress
    /// Group given to items without one, so the puppets show together.
    public let defaultGroup: String
    /// What each user was offered last, by puppet.
    private var offered: [String: [JID: Item]] = [:]

    public init(puppets: PuppetAddress, defaultGroup: String) {
        self.puppets = puppets
        self.defaultGroup = defaultGroup
    }

    /// The items to add or change and the puppets to remove for `user`, given the linked
    /// account's `contacts`; remembered as offered.
    public mutating func changes(for user: String, contacts: [RosterItem]) -> (add: [Item], remove: [JID]) {
        var wanted: [JID: Item] = [:]
        for contact in contacts where contact.jid.localpart != nil {
            guard let puppet = self.puppets.puppet(for: contact.jid.bare.description) else { continue }
            wanted[puppet] = Item(puppet: puppet, name: contact.name ?? contact.jid.bare.description, groups: contact.groups.isEmpty ? [self.defaultGroup] : contact.groups)
        }
        let before = self.offered[user] ?? [:]
        let add = wanted.values.filter { before[$0.puppet] != $0 }.sorted { $0.puppet.description < $1.puppet.description }
        let remove = before.keys.filter { wanted[$0] == nil }.sorted { $0.description < $1.description }
        self.offered[user] = wanted
        return (add, remove)
    }

    /// What each user was offered so far, by puppet.
    public var offeredItems: [String: [Item]] {
        self.offered.mapValues { $0.values.sorted { $0.puppet.description < $1.puppet.description } }
    }

    /// Forgets what `user` was offered (unlinked, or offered afresh on the next call).
    public mutating func forget(_ user: String) {
        self.offered[user] = nil
    }

    /// XEP-0144 §5 messages from the gateway to `user`, at most `perMessage` items each.
    public static func exchangeMessages(from domain: JID, to user: JID, add: [Item], remove: [JID], perMessage: Int = 100) -> [XMLElement] {
        let actions = add.map { ($0, "add") } + remove.map { (Item(puppet: $0, name: nil, groups: []), "delete") }
        return stride(from: 0, to: actions.count, by: max(perMessage, 1)).map { start in
            var exchange = XMLElement(name: "x", namespace: GatewayDirectory.Namespace.rosterExchange)
            for (item, action) in actions[start..<min(start + perMessage, actions.count)] {
                exchange.append(Self.element(item, namespace: GatewayDirectory.Namespace.rosterExchange, attributes: [XMLAttribute(name: "action", value: action)]))
            }
            var message = Message(type: .normal, to: user, id: nil, body: nil)
            message.header.from = domain
            message.extensions.append(exchange)
            return message.element
        }
    }

    /// XEP-0356 §5 roster pushes (one item per set, RFC 6121 §2.1.5) into `user`'s roster.
    public static func rosterPushes(from domain: JID, to user: JID, add: [Item], remove: [JID]) -> [XMLElement] {
        let items = add.map { Self.element($0, namespace: GatewayDirectory.Namespace.roster, attributes: [XMLAttribute(name: "subscription", value: "both")]) }
            + remove.map { Self.element(Item(puppet: $0, name: nil, groups: []), namespace: GatewayDirectory.Namespace.roster, attributes: [XMLAttribute(name: "subscription", value: "remove")]) }
        return items.map { item in
            var query = XMLElement(name: "query", namespace: GatewayDirectory.Namespace.roster)
            query.append(item)
            var iq = IQ(type: .set, id: "", to: user.bare, payload: query)
            iq.header.from = domain
            return iq.element
        }
    }

    private static func element(_ item: Item, namespace: String, attributes: [XMLAttribute]) -> XMLElement {
        var element = XMLElement(name: "item", namespace: namespace, attributes: [XMLAttribute(name: "jid", value: item.puppet.description)] + attributes)
        element[attribute: "name"] = item.name
        for group in item.groups {
            var child = XMLElement(name: "group", namespace: namespace)
            child.append(text: group)
            element.append(child)
        }
        return element
    }
}
