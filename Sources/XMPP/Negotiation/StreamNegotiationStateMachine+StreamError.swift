/// Reading the server's `<stream:error/>` (RFC 6120 §4.9.2), for the client's and the
/// component's negotiation alike.
extension StreamNegotiationStateMachine {
    /// Builds the typed error for a `<stream:error/>`: its defined condition (unknown ones
    /// are `undefined-condition`) and its text.
    static func streamError(from element: XMLElement) -> XMPPClientError {
        var condition = StreamErrorCondition.undefinedCondition
        var text: String?
        for child in element.elements where child.namespace == XMPPNamespace.streamErrors {
            if child.name == "text" {
                text = child.text
            } else if let known = StreamErrorCondition(rawValue: child.name) {
                condition = known
            }
        }
        return .streamError(condition: condition, text: text)
    }
}
