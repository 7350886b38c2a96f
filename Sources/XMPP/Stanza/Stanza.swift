/// What every stanza has (RFC 6120 §8.1): the shared attributes in a ``StanzaHeader``,
/// with `from` and `to` read and written through it.
public protocol Stanza: Hashable, Sendable {
    var header: StanzaHeader { get set }
}

extension Stanza {
    /// The sender (RFC 6120 §8.1.2).
    public var from: JID? {
        get { self.header.from }
        set { self.header.from = newValue }
    }

    /// The intended recipient (RFC 6120 §8.1.1).
    public var to: JID? {
        get { self.header.to }
        set { self.header.to = newValue }
    }
}
