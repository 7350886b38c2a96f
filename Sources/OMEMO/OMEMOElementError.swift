/// Why an OMEMO element (XEP-0384 v0.3 §4–5) a peer sent was refused: which element and
/// what was wrong with it. Peer input: never a trap, always one of these.
public struct OMEMOElementError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `list`, `bundle` or `encrypted`.
    public var element: String
    public var reason: String

    public init(_ element: String, _ reason: String) {
        self.element = element
        self.reason = reason
    }

    public var description: String { "malformed OMEMO <\(self.element)>: \(self.reason)" }
}
