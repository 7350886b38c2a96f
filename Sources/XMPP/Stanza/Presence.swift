/// A `<presence/>` stanza (RFC 6121 §4, §3 for subscriptions; RFC 6120 §8.2.2).
public struct Presence: Stanza {
    /// RFC 6121 §4.7.1; no `type` attribute means available.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case available
        case unavailable
        case subscribe
        case subscribed
        case unsubscribe
        case unsubscribed
        case probe
        case error
    }

    /// RFC 6121 §4.7.2.1.
    public enum Show: String, Hashable, Sendable, CaseIterable {
        case away
        case chat
        case dnd
        case xa
    }

    public var header: StanzaHeader
    public var type: Kind
    public var show: Show?
    public var status: String?
    /// -128…127 (RFC 6121 §4.7.2.3); an invalid value reads as 0.
    public var priority: Int8
    public var error: StanzaError?
    public var extensions: [XMLElement]

    public init(type: Kind = .available, to: JID? = nil, show: Show? = nil, status: String? = nil, priority: Int8 = 0) {
        self.header = StanzaHeader(to: to)
        self.type = type
        self.show = show
        self.status = status
        self.priority = priority
        self.error = nil
        self.extensions = []
    }

    public init(element: XMLElement) throws(StanzaParseError) {
        guard element.name == "presence", element.namespace == XMPPNamespace.client else {
            throw .notAStanza(element.name)
        }
        let (header, type) = try StanzaHeader.parse(element)
        self.header = header
        if let type {
            guard let kind = Kind(rawValue: type), kind != .available else { throw .invalidType(type) }
            self.type = kind
        } else {
            self.type = .available
        }
        self.error = self.type == .error ? StanzaError(stanza: element) : nil
        self.priority = 0
        self.extensions = []
        for child in element.elements {
            let isDefaultLanguage = child[attribute: "xml:lang"] == nil || child[attribute: "xml:lang"] == header.language
            guard child.namespace == XMPPNamespace.client else {
                self.extensions.append(child)
                continue
            }
            switch child.name {
            case "show" where self.show == nil: self.show = Show(rawValue: child.text)
            case "status" where self.status == nil && isDefaultLanguage: self.status = child.text
            case "priority": self.priority = Int8(child.text.trimmingWhitespace) ?? 0
            case "error" where self.type == .error: break
            default: self.extensions.append(child)
            }
        }
    }

    /// The stanza as XML.
    public var element: XMLElement {
        let type = self.type == .available ? nil : self.type.rawValue
        var element = XMLElement(name: "presence", namespace: XMPPNamespace.client, attributes: self.header.attributes(type: type))
        if let show { element.append(Self.child("show", show.rawValue)) }
        if let status { element.append(Self.child("status", status)) }
        if self.priority != 0 { element.append(Self.child("priority", String(self.priority))) }
        element.children += self.extensions.map(XMLNode.element)
        if let error { element.append(error.element) }
        return element
    }

    private static func child(_ name: String, _ text: String) -> XMLElement {
        var element = XMLElement(name: name, namespace: XMPPNamespace.client)
        element.append(text: text)
        return element
    }
}
