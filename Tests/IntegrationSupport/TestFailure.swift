/// A precondition of an integration test that did not hold (a server or account that
/// would not start), with what was seen.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
