/// Why an element could not be read as a typed stanza (RFC 6120 §8.1–§8.2).
public enum StanzaParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Not a `message`, `presence` or `iq` in `jabber:client`.
    case notAStanza(String)
    /// A `to` or `from` address that is not a valid JID.
    case invalidAddress(attribute: String, value: String, JIDError)
    /// An `iq` without an `id` (RFC 6120 §8.2.3).
    case missingID
    /// A `type` the stanza kind does not define.
    case invalidType(String)
    /// An `iq` get/set without exactly one payload element (RFC 6120 §8.2.3).
    case invalidPayload

    public var description: String {
        switch self {
        case .notAStanza(let name): "not a stanza: <\(name)>"
        case .invalidAddress(let attribute, let value, let error): "invalid \(attribute) '\(value)': \(error)"
        case .missingID: "iq without id"
        case .invalidType(let type): "invalid stanza type '\(type)'"
        case .invalidPayload: "iq get/set must carry exactly one payload element"
        }
    }

    /// The stanza error to answer with, where one is due.
    public var stanzaError: StanzaError {
        switch self {
        case .invalidAddress: StanzaError(.jidMalformed)
        case .notAStanza, .missingID, .invalidType, .invalidPayload: StanzaError(.badRequest)
        }
    }
}
