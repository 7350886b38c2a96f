import StanzaIdentity

/// A `<message/>` stanza (RFC 6121 §5; RFC 6120 §8.2.1): type, body, subject, thread,
/// and every other child kept as an extension so relaying loses nothing.
public struct Message: Stanza {
    /// RFC 6121 §5.2.2; an unknown type is read as `normal`, as the RFC says.
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case chat
        case error
        case groupchat
        case headline
        case normal
    }

    public var header: StanzaHeader
    public var type: Kind
    /// The body in the stanza's language (the first `<body/>` without its own `xml:lang`).
    public var body: String?
    public var subject: String?
    public var thread: String?
    /// The `parent` attribute of `<thread/>` (RFC 6121 §5.2.5).
    public var threadParent: String?
    public var error: StanzaError?
    /// Children other than the body, subject and thread read above, in order.
    public var extensions: [XMLElement]
    /// The inbound stream management number the session gave this message (XEP-0198),
    /// when its consumer acknowledges it with ``XMPPSession/handled(_:)``; not part of the XML.
    public var streamNumber: UInt32?
    /// The id our server's archive, or the room, gave this message (XEP-0359 `stanza-id`, or
    /// the XEP-0313 result id of an archived copy), set by the session once it trusts it;
    /// not part of the XML.
    public var stanzaID: StanzaID?
    /// Where the account's archive cursor stands once this message is handled (set by the
    /// session while it tracks the archive); not part of the XML.
    public var archiveCursor: ArchiveCursor?

    public init(type: Kind = .chat, to: JID? = nil, id: String? = nil, body: String? = nil, subject: String? = nil) {
        self.header = StanzaHeader(to: to, id: id)
        self.type = type
        self.body = body
        self.subject = subject
        self.thread = nil
        self.threadParent = nil
        self.error = nil
        self.extensions = []
    }

    public init(element: XMLElement) throws(StanzaParseError) {
        guard element.name == "message", element.namespace == XMPPNamespace.client else {
            throw .notAStanza(element.name)
        }
        let (header, type) = try StanzaHeader.parse(element)
        self.header = header
        self.type = type.flatMap(Kind.init(rawValue:)) ?? .normal
        self.error = self.type == .error ? StanzaError(stanza: element) : nil
        self.extensions = []
        for child in element.elements {
            let isDefaultLanguage = child[attribute: "xml:lang"] == nil || child[attribute: "xml:lang"] == header.language
            guard child.namespace == XMPPNamespace.client else {
                self.extensions.append(child)
                continue
            }
            switch child.name {
            case "body" where self.body == nil && isDefaultLanguage: self.body = child.text
            case "subject" where self.subject == nil && isDefaultLanguage: self.subject = child.text
            case "thread" where self.thread == nil:
                self.thread = child.text
                self.threadParent = child[attribute: "parent"]
            case "error" where self.type == .error: break
            default: self.extensions.append(child)
            }
        }
    }

    public var id: String? {
        get { self.header.id }
        set { self.header.id = newValue }
    }

    /// The stanza as XML.
    public var element: XMLElement {
        var element = XMLElement(name: "message", namespace: XMPPNamespace.client, attributes: self.header.attributes(type: self.type.rawValue))
        for (name, value) in [("subject", self.subject), ("body", self.body), ("thread", self.thread)] {
            guard let value else { continue }
            var child = XMLElement(name: name, namespace: XMPPNamespace.client)
            if name == "thread", let parent = self.threadParent { child[attribute: "parent"] = parent }
            child.append(text: value)
            element.append(child)
        }
        element.children += self.extensions.map(XMLNode.element)
        if let error { element.append(error.element) }
        return element
    }
}
