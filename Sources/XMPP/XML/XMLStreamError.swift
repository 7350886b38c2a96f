/// A violation found while decoding the incoming XML stream (RFC 6120 §4.9, §11).
///
/// Carries the stream error condition to send to the peer before closing, and a
/// human-readable detail for the log.
public struct XMLStreamError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The condition to report to the peer.
    public var condition: StreamErrorCondition
    /// What exactly was wrong, for logs; never contains more than a short excerpt of peer data.
    public var detail: String

    public init(_ condition: StreamErrorCondition, _ detail: String) {
        self.condition = condition
        self.detail = detail
    }

    public var description: String { "\(self.condition.rawValue): \(self.detail)" }
}
