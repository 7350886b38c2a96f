/// Limits the XML stream decoder enforces on peer input; exceeding one is a
/// `policy-violation` stream error (RFC 6120 §4.9.3.14).
public struct XMLStreamLimits: Hashable, Sendable {
    /// Largest top-level element in bytes of input (Prosody and ejabberd default to 256 KiB).
    public var maxStanzaBytes: Int
    /// Deepest element nesting, counting the stream element as depth 1.
    public var maxDepth: Int
    /// Most attributes (including namespace declarations) on one element.
    public var maxAttributes: Int

    public init(maxStanzaBytes: Int = 256 * 1024, maxDepth: Int = 32, maxAttributes: Int = 64) {
        self.maxStanzaBytes = maxStanzaBytes
        self.maxDepth = maxDepth
        self.maxAttributes = maxAttributes
    }
}
