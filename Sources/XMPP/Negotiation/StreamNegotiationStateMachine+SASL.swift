/// Authentication with RFC 6120's SASL (§6): `<auth/>`, challenges and responses, then a
/// stream restart; or SASL2 where offered (`+SASL2.swift`). The channel binding is chosen
/// from XEP-0440's announcement (``ChannelBindingChoice``).
extension StreamNegotiationStateMachine {
    mutating func startAuthentication(_ features: StreamFeatures, tlsActive: Bool) -> Action {
        switch self.configuration.purpose {
        case .register: return self.startRegistration(features)
        case .login: break
        }
        if tlsActive, let login = self.configuration.sasl2, let offered = features.sasl2 {
            return self.startSASL2(offered, login: login, token: login.token)
        }
        var sasl = self.makeSASL()
        let action = sasl.start(
            offeredMechanisms: features.mechanisms, tlsActive: tlsActive, channelBinding: self.channelBinding,
            announcedTypes: self.announcedChannelBindingTypes, profile: .sasl1
        )
        self.state = .authenticating(sasl)
        return self.run(action)
    }

    /// XEP-0440's channel-binding types of this stream; nil when none were announced.
    var announcedChannelBindingTypes: [String]? {
        guard let types = self.features?.channelBindingTypes, !types.isEmpty else { return nil }
        return types
    }

    func makeSASL() -> SASLStateMachine {
        SASLStateMachine(
            username: self.configuration.jid.localpart ?? "",
            password: self.password,
            clientNonce: self.clientNonce,
            configuration: self.configuration.sasl,
            keyCache: self.keyCache
        )
    }

    /// An element during RFC 6120's SASL exchange.
    mutating func saslElementReceived(_ element: XMLElement, _ machine: SASLStateMachine, dataFollows: Bool) -> Action {
        var sasl = machine
        guard element.namespace == XMPPNamespace.sasl else { return self.unexpected(element.name) }
        let action: SASLStateMachine.Action
        switch element.name {
        case "challenge":
            guard let payload = try? SASLBase64.decode(element.text) else {
                return self.authenticationFailed(.invalidBase64)
            }
            action = sasl.challengeReceived(payload)
        case "success":
            guard let payload = try? SASLBase64.decode(element.text) else {
                return self.authenticationFailed(.invalidBase64)
            }
            action = sasl.successReceived(additionalData: payload)
        case "failure":
            let condition = element.elements.lazy.compactMap { SASLFailureCondition(elementName: $0.name) }.first
            let text = element.firstChild(named: "text")?.text
            action = sasl.failureReceived(condition: condition ?? .notAuthorized, text: text)
        default:
            return self.unexpected(element.name)
        }
        self.state = .authenticating(sasl)
        if case .succeeded = action, dataFollows {
            return self.closeWithStreamError(.badFormat, .unexpectedElement("data after <success/> before the stream restart"))
        }
        return self.run(action)
    }

    mutating func run(_ action: SASLStateMachine.Action) -> Action {
        guard case .authenticating(let sasl) = self.state else { return self.unexpected("SASL") }
        self.warnings = sasl.warnings.map { "\($0)" }
        switch action {
        case .sendAuth(let mechanism, let initialResponse):
            var auth = XMLElement(
                name: "auth", namespace: XMPPNamespace.sasl, attributes: [XMLAttribute(name: "mechanism", value: mechanism)]
            )
            auth.append(text: initialResponse.map(SASLBase64.encode) ?? "=")
            return .send(auth)
        case .sendResponse(let bytes):
            var response = XMLElement(name: "response", namespace: XMPPNamespace.sasl)
            response.append(text: SASLBase64.encode(bytes))
            return .send(response)
        case .succeeded:
            self.authenticatedWith = sasl.selectedMechanism
            self.login.profile = .sasl
            self.login.mechanism = sasl.selectedMechanism?.rawValue
            self.login.channelBinding = sasl.channelBinding?.type
            self.login.downgradeProtected = sasl.downgradeProtected
            self.state = .awaitingStreamHeader(.authenticated)
            return .restartStream(from: self.streamFrom)
        case .failed(let error):
            return self.authenticationFailed(error)
        }
    }
}
