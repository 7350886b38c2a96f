/// IQs of the negotiation (RFC 6120 §8.2.3): building a request, reading its answer.
extension StreamNegotiationStateMachine {
    enum IQResult {
        case success(XMLElement?)
        case failure(condition: String, text: String?)
    }

    static func iq(type: String, id: String, payload: XMLElement) -> XMLElement {
        XMLElement(
            name: "iq", namespace: XMPPNamespace.client,
            attributes: [XMLAttribute(name: "type", value: type), XMLAttribute(name: "id", value: id)],
            children: [.element(payload)]
        )
    }

    static func iqResult(_ element: XMLElement, id: String) -> IQResult? {
        guard element.name == "iq", element[attribute: "id"] == id else { return nil }
        switch element[attribute: "type"] {
        case "result":
            return .success(element.elements.first)
        case "error":
            let error = element.firstChild(named: "error")
            let condition = error?.elements.first(where: { $0.namespace == XMPPNamespace.stanzas && $0.name != "text" })
            return .failure(condition: condition?.name ?? "undefined-condition", text: error?.firstChild(named: "text")?.text)
        default:
            return nil
        }
    }

    /// The empty feature list, for a stream ready before any features were read.
    static var noFeatures: StreamFeatures {
        StreamFeatures(XMLElement(name: "features", namespace: XMPPNamespace.stream))
    }
}
