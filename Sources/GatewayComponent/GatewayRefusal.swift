import XMPP

/// Why the bridge refused a registration, as the answer's error condition and text
/// (XEP-0077 §3.2, RFC 6120 §8.3).
public struct GatewayRefusal: Error, Sendable, CustomStringConvertible {
    public var condition: StanzaError.Condition
    public var text: String

    public init(_ condition: StanzaError.Condition, _ text: String) {
        self.condition = condition
        self.text = text
    }

    public var description: String { "\(self.condition.rawValue): \(self.text)" }
}
