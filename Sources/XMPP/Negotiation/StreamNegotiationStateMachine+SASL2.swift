/// Authentication with SASL2 (XEP-0388): one `<authenticate>` carries the login (a
/// password through SCRAM, or a FAST token, XEP-0484) and what rides along: a stream
/// management resumption (XEP-0198 §"SASL2 and Bind2"), a Bind 2 bind with stream
/// management and carbons enabled on the way (XEP-0386), a request for a FAST token. No
/// stream restart follows `<success>`: a resumed stream is ready at once, a bound one once
/// its features arrive, and otherwise the features lead on to RFC 6120's bind.
extension StreamNegotiationStateMachine {
    mutating func startSASL2(_ offered: SASL2Features, login: SASL2Login, token: FASTToken?) -> Action {
        let announced = self.announcedChannelBindingTypes
        // XEP-0388 §2.3: the id is a UUID v4; none is sent rather than an empty one.
        var request = SASL2Request(mechanism: "", initialResponse: nil, userAgent: login.userAgent.id.isEmpty ? nil : login.userAgent)
        if let resume = self.configuration.resume, offered.inlineResumption {
            request.resume = resume
            self.resumeSentInline = true
        }
        // A new bind would end the session there is to resume: Bind 2 only where the
        // resumption rides along, or there is none to make.
        if let tag = login.bindTag, let features = offered.bind2Features, self.configuration.resume == nil || offered.inlineResumption {
            request.bind = SASL2Request.Bind(
                tag: tag, enableStreamManagement: login.enableStreamManagement && features.contains(StreamManagementStateMachine.namespace),
                resumable: login.resumesStreams, enableCarbons: login.enableCarbons && features.contains(CarbonFilter.namespace)
            )
        }
        let credential: SASL2StateMachine.Credential
        if let token, token.mechanism.isUsable(offered: offered.fastMechanisms ?? [], announcedTypes: announced, data: self.channelBinding),
            let binding = token.mechanism.channelBindingData(self.channelBinding)
        {
            credential = .token(token, username: self.configuration.jid.localpart ?? "", channelBinding: binding)
        } else {
            credential = .password(self.makeSASL())
            if login.requestsToken, let mechanisms = offered.fastMechanisms {
                request.requestToken = HashedTokenMechanism.strongest(offered: mechanisms, announcedTypes: announced, data: self.channelBinding)?.rawValue
            }
        }
        self.sasl2Request = request
        var machine = SASL2StateMachine()
        let action = machine.start(
            credential, offered: offered, tlsActive: true, channelBinding: self.channelBinding, announcedTypes: announced, request: request
        )
        self.state = .authenticating2(machine)
        return self.run(action, machine)
    }

    /// An element during the SASL2 exchange.
    mutating func sasl2ElementReceived(_ element: XMLElement, _ machine: SASL2StateMachine) -> Action {
        var machine = machine
        let action = machine.received(element)
        self.state = .authenticating2(machine)
        for warning in machine.warnings.map({ "\($0)" }) where !self.warnings.contains(warning) { self.warnings.append(warning) }
        return self.run(action, machine)
    }

    private mutating func run(_ action: SASL2StateMachine.Action, _ machine: SASL2StateMachine) -> Action {
        switch action {
        case .send(let element):
            return .send(element)
        case .failed(let error):
            return self.authenticationFailed(error)
        case .tokenRefused(let condition):
            // XEP-0484 §3.4: a refused token is dropped; the password logs in on this stream.
            self.login.tokenRefused = true
            self.warnings.append("the server refused the FAST token (\(condition.rawValue)); logging in with the password")
            guard let offered = self.features?.sasl2, let login = self.configuration.sasl2 else {
                return self.authenticationFailed(.unexpectedEvent("SASL2 without its features"))
            }
            self.resumeSentInline = false
            return self.startSASL2(offered, login: login, token: nil)
        case .succeeded(let success):
            return self.succeeded(success, machine)
        }
    }

    private mutating func succeeded(_ success: SASL2Outcome.Success, _ machine: SASL2StateMachine) -> Action {
        let identity = success.authorizationIdentifier
        guard identity.bare == self.configuration.jid.bare else {
            return self.authenticationFailed(.malformedOutcome("authorized as \(identity.bare), not as the account"))
        }
        let request = self.sasl2Request
        self.login.profile = .sasl2
        self.login.mechanism = machine.mechanism
        self.login.channelBinding = machine.channelBinding
        self.login.usedToken = machine.usesToken
        self.login.downgradeProtected = machine.downgradeProtected
        self.authenticatedWith = machine.mechanism.flatMap(SASLMechanism.init(rawValue:))
        if let element = success.token {
            // Asked for with a mechanism, or rotated in for the one logged in with.
            if let mechanism = request?.requestToken.flatMap(HashedTokenMechanism.init(rawValue:))
                ?? machine.mechanism.flatMap(HashedTokenMechanism.init(rawValue:))
            {
                if let token = FASTToken(element, mechanism: mechanism) {
                    self.login.newToken = token
                } else {
                    self.warnings.append("a FAST token without its secret or a valid expiry; not kept")
                }
            } else {
                self.warnings.append("a FAST token nobody asked for, for no known mechanism; not kept")
            }
        }
        if request?.resume != nil, let answer = success.resumeAnswer {
            self.resumeAnswer = answer
            if answer.name == "resumed" {
                guard let resume = request?.resume, answer[attribute: "previd"].map({ $0 == resume.previousID }) ?? true else {
                    return self.closeWithStreamError(.undefinedCondition, .unexpectedElement("<resumed/> for another session"))
                }
                // A resumed stream keeps the session's JID (XEP-0198 §5).
                guard identity == resume.jid else {
                    return self.closeWithStreamError(.undefinedCondition, .unexpectedElement("resumed as \(identity), not as \(resume.jid)"))
                }
                return self.becomeReady(resume.jid)
            }
        }
        if let bind = request?.bind, let answer = success.bindAnswer {
            guard answer.name == "bound" else {
                self.warnings.append("Bind 2 failed; binding as RFC 6120 says")
                self.state = .awaitingFeatures(.authenticated)
                return .none
            }
            self.login.boundInline = true
            self.login.carbonsEnabled = bind.enableCarbons
            if bind.enableStreamManagement {
                let sm = StreamManagementStateMachine.namespace
                self.login.streamManagementAnswer = answer.elements.first { $0.namespace == sm && ($0.name == "enabled" || $0.name == "failed") }
                if self.login.streamManagementAnswer == nil {
                    self.warnings.append("Bind 2 did not answer stream management's inline enable; enabling it after")
                }
            }
            self.state = .awaitingBoundFeatures(identity)
            return .none
        }
        // Not bound inline: the features of the authenticated stream follow, then RFC 6120's bind.
        self.state = .awaitingFeatures(.authenticated)
        return .none
    }
}
