/// The attributes every stanza shares (RFC 6120 §8.1): addresses, id, language, and
/// any other attributes, kept so a relayed stanza loses nothing.
public struct StanzaHeader: Hashable, Sendable {
    public var from: JID?
    public var to: JID?
    public var id: String?
    /// `xml:lang`.
    public var language: String?
    /// Attributes other than from/to/id/type/xml:lang, in order.
    public var otherAttributes: [XMLAttribute]

    public init(from: JID? = nil, to: JID? = nil, id: String? = nil, language: String? = nil, otherAttributes: [XMLAttribute] = []) {
        self.from = from
        self.to = to
        self.id = id
        self.language = language
        self.otherAttributes = otherAttributes
    }

    /// Reads the shared attributes; `type` is returned separately for the stanza kind to judge.
    static func parse(_ element: XMLElement) throws(StanzaParseError) -> (header: StanzaHeader, type: String?) {
        var header = StanzaHeader()
        var type: String?
        for attribute in element.attributes {
            switch attribute.name {
            case "from": header.from = try Self.jid(attribute)
            case "to": header.to = try Self.jid(attribute)
            case "id": header.id = attribute.value
            case "type": type = attribute.value
            case "xml:lang": header.language = attribute.value
            default: header.otherAttributes.append(attribute)
            }
        }
        return (header, type)
    }

    private static func jid(_ attribute: XMLAttribute) throws(StanzaParseError) -> JID {
        do {
            return try JID(attribute.value)
        } catch {
            throw .invalidAddress(attribute: attribute.name, value: String(attribute.value.prefix(100)), error)
        }
    }

    /// Writes the shared attributes and `type` in a stable order.
    func attributes(type: String?) -> [XMLAttribute] {
        var attributes: [XMLAttribute] = []
        if let from { attributes.append(XMLAttribute(name: "from", value: from.description)) }
        if let to { attributes.append(XMLAttribute(name: "to", value: to.description)) }
        if let type { attributes.append(XMLAttribute(name: "type", value: type)) }
        if let id { attributes.append(XMLAttribute(name: "id", value: id)) }
        if let language { attributes.append(XMLAttribute(name: "xml:lang", value: language)) }
        return attributes + self.otherAttributes
    }
}
