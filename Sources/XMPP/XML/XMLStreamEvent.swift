/// What the XML stream decoder found: the stream header, one complete top-level
/// element (stanza or nonza, RFC 6120 §4.1), or the end of the stream.
public enum XMLStreamEvent: Hashable, Sendable {
    /// `<stream:stream …>` was opened; its attributes by qualified name.
    case streamOpened(attributes: [XMLAttribute])
    /// A complete first-level child of the stream.
    case element(XMLElement)
    /// `</stream:stream>` arrived.
    case streamClosed
}
