import XMPP

/// What a gateway answers to requests (IQs) addressed to it or to its puppets, without
/// I/O: service discovery (XEP-0030) with the gateway identity of XEP-0100 §4, JID
/// translation (`jabber:iq:gateway`, XEP-0100 §6.3), in-band registration (XEP-0077) and
/// ping (XEP-0199). Registration and unregistration need the bridge (a login, the state
/// file): they come back as actions for the transport to carry out.
public struct GatewayDirectory: Sendable {
    /// What to do with one request: answer it, or ask the bridge first.
    public enum Answer: Sendable {
        /// Send this stanza.
        case reply(XMLElement)
        /// `user` asks to link the account `address` with `password`; answer `request`.
        case register(user: JID, address: JID, password: String, request: IQ)
        /// `user` asks to be unlinked; answer `request`.
        case unregister(user: JID, request: IQ)
        /// `user` asks for the vCard of `contact` through a puppet; answer `request`.
        case vCard(user: JID, contact: String, request: IQ)
        /// Nothing to send (results, errors, requests without an id).
        case none
    }

    public let puppets: PuppetAddress
    /// The disco identity's name (`name` in the configuration).
    public let name: String
    public let registration: RegistrationPolicy
    public let allow: [String]

    public init(domain: String, name: String?, registration: RegistrationPolicy, allow: [String]) {
        self.puppets = PuppetAddress(domain: domain)
        self.name = name ?? "XMPP gateway"
        self.registration = registration
        self.allow = allow
    }

    /// The answer to `element` (an `<iq/>` for our domain); `linked` says for which
    /// linked account a user's bare JID is registered, and whether it came from the
    /// configuration (nil: not linked).
    public func answer(_ element: XMLElement, linked: (JID) -> (account: String, configured: Bool)?) -> Answer {
        guard let iq = try? IQ(element: element), let from = iq.from, let to = iq.to else { return .none }
        guard iq.type == .get || iq.type == .set, let payload = iq.payload else { return .none }
        let user = from.bare
        let toPuppet = to.localpart != nil
        switch (payload.namespace, payload.name, iq.type) {
        case (Namespace.ping, "ping", .get):
            return .reply(Self.result(iq))
        case (Namespace.discoInfo, "query", .get):
            if toPuppet {
                guard let contact = self.puppets.contact(of: to.bare) else { return self.error(iq, .itemNotFound) }
                return .reply(Self.result(iq, payload: self.puppetInfo(contact: contact, node: payload[attribute: "node"])))
            }
            return .reply(Self.result(iq, payload: self.gatewayInfo(node: payload[attribute: "node"])))
        case (Namespace.discoItems, "query", .get):
            var query = XMLElement(name: "query", namespace: Namespace.discoItems)
            query[attribute: "node"] = payload[attribute: "node"]
            return .reply(Self.result(iq, payload: query))
        case (Namespace.gateway, "query", .get) where !toPuppet:
            var query = XMLElement(name: "query", namespace: Namespace.gateway)
            query.append(Self.text("desc", Namespace.gateway, "Enter the address of a contact on the linked server"))
            query.append(Self.text("prompt", Namespace.gateway, "Address"))
            return .reply(Self.result(iq, payload: query))
        case (Namespace.gateway, "query", .set) where !toPuppet:
            let input = Self.trimmed(payload.firstChild(named: "prompt", namespace: Namespace.gateway)?.text ?? "")
            guard let contact = try? JID(input), contact.localpart != nil, let puppet = self.puppets.puppet(for: contact.bare.description) else {
                return self.error(iq, .jidMalformed, "not an address: \(input)")
            }
            var query = XMLElement(name: "query", namespace: Namespace.gateway)
            query.append(Self.text("jid", Namespace.gateway, puppet.description))
            // XEP-0100 before 1.0 answered in <prompt/>; older clients read that.
            query.append(Self.text("prompt", Namespace.gateway, puppet.description))
            return .reply(Self.result(iq, payload: query))
        case (Namespace.register, "query", .get) where !toPuppet:
            if let current = linked(user) {
                return .reply(Self.result(iq, payload: Self.registrationForm(registered: current.account)))
            }
            guard self.registration.allows(user.description, patterns: self.allow) else {
                return self.error(iq, .forbidden, "registration with this gateway is not open to \(user)")
            }
            return .reply(Self.result(iq, payload: Self.registrationForm(registered: nil)))
        case (Namespace.register, "query", .set) where !toPuppet:
            if payload.firstChild(named: "remove", namespace: Namespace.register) != nil {
                guard let current = linked(user) else { return self.error(iq, .registrationRequired, "not registered") }
                guard !current.configured else { return self.error(iq, .notAllowed, "linked in the bridge's configuration; ask its operator") }
                return .unregister(user: user, request: iq)
            }
            guard self.registration.allows(user.description, patterns: self.allow) else {
                return self.error(iq, .forbidden, "registration with this gateway is not open to \(user)")
            }
            if let current = linked(user), current.configured {
                return self.error(iq, .notAllowed, "linked in the bridge's configuration; ask its operator")
            }
            guard let fields = Self.submittedFields(payload), let address = fields.username, let password = fields.password, !password.isEmpty else {
                return self.error(iq, .notAcceptable, "an address and a password are required")
            }
            guard let jid = try? JID(address), jid.localpart != nil, jid.resourcepart == nil else {
                return self.error(iq, .jidMalformed, "not an address: \(address)")
            }
            return .register(user: user, address: jid, password: password, request: iq)
        case (Namespace.vCard, "vCard", .get) where toPuppet:
            guard let contact = self.puppets.contact(of: to.bare) else { return self.error(iq, .itemNotFound) }
            guard linked(user) != nil else { return self.error(iq, .registrationRequired) }
            return .vCard(user: user, contact: contact, request: iq)
        default:
            return self.error(iq, .serviceUnavailable)
        }
    }

    /// The disco#info of the gateway itself (XEP-0100 §4: category `gateway`, type `xmpp`).
    func gatewayInfo(node: String?) -> XMLElement {
        var query = XMLElement(name: "query", namespace: Namespace.discoInfo)
        query[attribute: "node"] = node
        query.append(XMLElement(name: "identity", namespace: Namespace.discoInfo, attributes: [
            XMLAttribute(name: "category", value: "gateway"), XMLAttribute(name: "type", value: "xmpp"), XMLAttribute(name: "name", value: self.name),
        ]))
        for feature in [Namespace.discoInfo, Namespace.discoItems, Namespace.register, Namespace.gateway, Namespace.ping] {
            query.append(XMLElement(name: "feature", namespace: Namespace.discoInfo, attributes: [XMLAttribute(name: "var", value: feature)]))
        }
        return query
    }

    /// A puppet's disco#info: a client that takes what the bridge relays.
    func puppetInfo(contact: String, node: String?) -> XMLElement {
        var query = XMLElement(name: "query", namespace: Namespace.discoInfo)
        query[attribute: "node"] = node
        query.append(XMLElement(name: "identity", namespace: Namespace.discoInfo, attributes: [
            XMLAttribute(name: "category", value: "client"), XMLAttribute(name: "type", value: "pc"), XMLAttribute(name: "name", value: contact),
        ]))
        for feature in Self.puppetFeatures {
            query.append(XMLElement(name: "feature", namespace: Namespace.discoInfo, attributes: [XMLAttribute(name: "var", value: feature)]))
        }
        return query
    }

    /// What crosses a puppet (issue 12's rich content) and what it answers.
    static let puppetFeatures = [
        Namespace.discoInfo, Namespace.ping, Namespace.vCard, "urn:xmpp:receipts", "urn:xmpp:chat-markers:0", "urn:xmpp:message-correct:0",
        "urn:xmpp:reply:0", "urn:xmpp:reactions:0", "urn:xmpp:message-retract:1", "jabber:x:oob",
    ]

    /// XEP-0077 §3.1 with a data form (XEP-0004): the address on the linked server and
    /// its password; `registered` adds `<registered/>` and the current address.
    static func registrationForm(registered: String?) -> XMLElement {
        var query = XMLElement(name: "query", namespace: Namespace.register)
        if let registered {
            query.append(XMLElement(name: "registered", namespace: Namespace.register))
            query.append(Self.text("username", Namespace.register, registered))
        } else {
            query.append(XMLElement(name: "username", namespace: Namespace.register))
        }
        query.append(Self.text("instructions", Namespace.register, "Enter the address and password of the account whose contacts you want here."))
        query.append(XMLElement(name: "password", namespace: Namespace.register))
        var form = XMLElement(name: "x", namespace: Namespace.dataForms, attributes: [XMLAttribute(name: "type", value: "form")])
        form.append(Self.text("title", Namespace.dataForms, "Link an XMPP account"))
        form.append(Self.text("instructions", Namespace.dataForms, "Enter the address and password of the account whose contacts you want here."))
        form.append(Self.field("FORM_TYPE", type: "hidden", value: Namespace.register, label: nil))
        form.append(Self.field("username", type: "text-single", value: registered, label: "Address (user@server)", required: true))
        form.append(Self.field("password", type: "text-private", value: nil, label: "Password", required: true))
        query.append(form)
        return query
    }

    /// The address and password of a registration: from a submitted data form, else the
    /// plain fields (XEP-0077 §3.2); nil when neither is there.
    static func submittedFields(_ query: XMLElement) -> (username: String?, password: String?)? {
        if let form = query.firstChild(named: "x", namespace: Namespace.dataForms), form[attribute: "type"] == "submit" {
            var values: [String: String] = [:]
            for field in form.elements where field.name == "field" {
                guard let name = field[attribute: "var"] else { continue }
                values[name] = field.firstChild(named: "value", namespace: Namespace.dataForms)?.text
            }
            return (values["username"].map(Self.trimmed), values["password"])
        }
        let username = query.firstChild(named: "username", namespace: Namespace.register).map { Self.trimmed($0.text) }
        let password = query.firstChild(named: "password", namespace: Namespace.register)?.text
        guard username != nil || password != nil else { return nil }
        return (username, password)
    }

    /// A result from the addressee back to the requester (a component sets `from`).
    public static func result(_ request: IQ, payload: XMLElement? = nil) -> XMLElement {
        var reply = request.result(payload: payload)
        reply.header.from = request.to
        return reply.element
    }

    /// An error answer from the addressee back to the requester. A registration's payload
    /// is not sent back (RFC 6120 §8.3.1 allows leaving it out): it holds the password.
    public static func errorReply(_ request: IQ, _ condition: StanzaError.Condition, _ text: String? = nil) -> XMLElement {
        var reply = request.errorReply(StanzaError(condition, text: text))
        reply.header.from = request.to
        if request.payload?.namespace == Namespace.register { reply.payload = nil }
        return reply.element
    }

    private func error(_ request: IQ, _ condition: StanzaError.Condition, _ text: String? = nil) -> Answer {
        .reply(Self.errorReply(request, condition, text))
    }

    static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }

    static func text(_ name: String, _ namespace: String, _ value: String) -> XMLElement {
        var element = XMLElement(name: name, namespace: namespace)
        element.append(text: value)
        return element
    }

    static func field(_ name: String, type: String, value: String?, label: String?, required: Bool = false) -> XMLElement {
        var field = XMLElement(name: "field", namespace: Namespace.dataForms, attributes: [XMLAttribute(name: "var", value: name), XMLAttribute(name: "type", value: type)])
        field[attribute: "label"] = label
        if required { field.append(XMLElement(name: "required", namespace: Namespace.dataForms)) }
        if let value { field.append(Self.text("value", Namespace.dataForms, value)) }
        return field
    }

    /// The namespaces a gateway speaks.
    public enum Namespace {
        public static let discoInfo = ServiceDiscovery.infoNamespace
        public static let discoItems = ServiceDiscovery.itemsNamespace
        public static let register = "jabber:iq:register"
        public static let gateway = "jabber:iq:gateway"
        public static let ping = "urn:xmpp:ping"
        public static let dataForms = ServiceDiscovery.dataFormsNamespace
        public static let vCard = "vcard-temp"
        public static let rosterExchange = "http://jabber.org/protocol/rosterx"
        public static let privilege = "urn:xmpp:privilege:2"
        public static let privilegeV1 = "urn:xmpp:privilege:1"
        public static let roster = Roster.namespace
    }
}
