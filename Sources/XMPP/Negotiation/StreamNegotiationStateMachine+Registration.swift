/// In-band registration (XEP-0077 §3.1) inside stream negotiation: once the stream is
/// secured, ask for the registration form, then submit username and password.
extension StreamNegotiationStateMachine {
    static let registerNamespace = "jabber:iq:register"
    static let registerFeatureNamespace = "http://jabber.org/features/iq-register"

    mutating func startRegistration(_ features: StreamFeatures) -> Action {
        guard features.elements.contains(where: { $0.name == "register" && $0.namespace == Self.registerFeatureNamespace }) else {
            return self.fail(.registrationFailed(condition: "not-offered", text: "the server does not offer in-band registration"))
        }
        let id = self.ids.next()
        self.state = .registering(requestID: id, submitted: false)
        return .send(Self.iq(type: "get", id: id, payload: XMLElement(name: "query", namespace: Self.registerNamespace)))
    }

    mutating func registrationReply(_ result: IQResult, submitted: Bool) -> Action {
        switch result {
        case .failure(let condition, let text):
            return self.fail(.registrationFailed(condition: condition, text: text))
        case .success(let payload):
            if submitted {
                self.state = .closing
                return .registered
            }
            // The form must at least ask for a username and a password (XEP-0077 §3.1).
            let fields = Set(payload?.elements.map(\.name) ?? [])
            guard fields.contains("username"), fields.contains("password") else {
                return self.fail(.registrationFailed(condition: "unsupported-form", text: "the server asks for fields other than username and password"))
            }
            let id = self.ids.next()
            var query = XMLElement(name: "query", namespace: Self.registerNamespace)
            for (name, value) in [("username", self.configuration.jid.localpart ?? ""), ("password", self.password)] {
                var field = XMLElement(name: name, namespace: Self.registerNamespace)
                field.append(text: value)
                query.append(field)
            }
            self.state = .registering(requestID: id, submitted: true)
            return .send(Self.iq(type: "set", id: id, payload: query))
        }
    }
}
