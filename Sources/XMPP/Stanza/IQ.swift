/// An `<iq/>` stanza: a request (get/set) with exactly one payload, or its answer
/// (result/error) (RFC 6120 §8.2.3).
public struct IQ: Stanza {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case get
        case set
        case result
        case error
    }

    public var header: StanzaHeader
    public var type: Kind
    /// The payload: required for get/set, optional for result, the original request's for error.
    public var payload: XMLElement?
    public var error: StanzaError?

    public init(type: Kind, id: String, to: JID? = nil, payload: XMLElement?) {
        self.header = StanzaHeader(to: to, id: id)
        self.type = type
        self.payload = payload
        self.error = nil
    }

    public init(element: XMLElement) throws(StanzaParseError) {
        guard element.name == "iq", element.namespace == XMPPNamespace.client else {
            throw .notAStanza(element.name)
        }
        let (header, type) = try StanzaHeader.parse(element)
        guard header.id?.isEmpty == false else { throw .missingID }
        guard let type, let kind = Kind(rawValue: type) else { throw .invalidType(type ?? "") }
        self.header = header
        self.type = kind
        let payloads = element.elements.filter { !($0.name == "error" && $0.namespace == XMPPNamespace.client) }
        switch kind {
        case .get, .set:
            guard payloads.count == 1 else { throw .invalidPayload }
            self.payload = payloads[0]
            self.error = nil
        case .result:
            self.payload = payloads.first
            self.error = nil
        case .error:
            self.payload = payloads.first
            self.error = StanzaError(stanza: element) ?? StanzaError(.undefinedCondition)
        }
    }

    public var id: String { self.header.id ?? "" }

    /// The answer to this request: a result with `payload`, addressed back to the sender.
    public func result(payload: XMLElement? = nil) -> IQ {
        var reply = IQ(type: .result, id: self.id, to: self.from, payload: payload)
        reply.header.language = nil
        return reply
    }

    /// The error answer to this request (RFC 6120 §8.3.1), carrying the request's payload.
    public func errorReply(_ error: StanzaError) -> IQ {
        var reply = IQ(type: .error, id: self.id, to: self.from, payload: self.payload)
        reply.error = error
        return reply
    }

    /// The stanza as XML.
    public var element: XMLElement {
        var element = XMLElement(name: "iq", namespace: XMPPNamespace.client, attributes: self.header.attributes(type: self.type.rawValue))
        if let payload { element.append(payload) }
        if let error { element.append(error.element) }
        return element
    }
}
