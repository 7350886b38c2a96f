/// After authentication (RFC 6120 §7; XEP-0198 §5): resume the previous stream management
/// session where one is asked for and offered, or bind a resource, then the legacy
/// session IQ where a server still requires it (RFC 3921 §3).
extension StreamNegotiationStateMachine {
    mutating func authenticatedFeaturesReceived(_ features: StreamFeatures) -> Action {
        if let resume = self.configuration.resume, !self.resumeSentInline,
            features.elements.contains(where: { $0.name == "sm" && $0.namespace == StreamManagementStateMachine.namespace })
        {
            self.state = .resuming(resume)
            var element = XMLElement(name: "resume", namespace: StreamManagementStateMachine.namespace)
            element[attribute: "previd"] = resume.previousID
            element[attribute: "h"] = String(resume.handled)
            return .send(element)
        }
        return self.startBinding(features)
    }

    mutating func startBinding(_ features: StreamFeatures) -> Action {
        guard features.bind else { return self.fail(.bindFailed(condition: "not-offered", text: nil)) }
        let id = self.ids.next()
        var bind = XMLElement(name: "bind", namespace: XMPPNamespace.bind)
        if let resource = self.configuration.jid.resourcepart {
            var element = XMLElement(name: "resource", namespace: XMPPNamespace.bind)
            element.append(text: resource)
            bind.append(element)
        }
        self.state = .binding(requestID: id)
        return .send(Self.iq(type: "set", id: id, payload: bind))
    }

    /// An element while binding, resuming or establishing the session.
    mutating func bindingElementReceived(_ element: XMLElement) -> Action {
        switch self.state {
        case .binding(let requestID):
            guard let result = Self.iqResult(element, id: requestID) else { return self.unexpected(element.name) }
            switch result {
            case .failure(let condition, let text):
                return self.fail(.bindFailed(condition: condition, text: text))
            case .success(let payload):
                guard payload?.name == "bind", payload?.namespace == XMPPNamespace.bind,
                    let text = payload?.firstChild(named: "jid")?.text, let jid = try? JID(text), jid.isFull,
                    jid.bare == self.configuration.jid.bare
                else {
                    return self.fail(.bindFailed(condition: "bad-jid", text: "server returned no valid full JID of this account"))
                }
                return self.bound(jid)
            }
        case .resuming(let resume):
            guard element.namespace == StreamManagementStateMachine.namespace else { return self.unexpected(element.name) }
            switch element.name {
            case "resumed":
                guard element[attribute: "previd"].map({ $0 == resume.previousID }) ?? true else {
                    return self.closeWithStreamError(.undefinedCondition, .unexpectedElement("<resumed/> for another session"))
                }
                self.resumeAnswer = element
                return self.becomeReady(resume.jid)
            case "failed":
                // The old session is gone: a new one, bound afresh.
                self.resumeAnswer = element
                return self.startBinding(self.features ?? Self.noFeatures)
            default:
                return self.unexpected(element.name)
            }
        case .establishingSession(let requestID, let jid):
            guard let result = Self.iqResult(element, id: requestID) else { return self.unexpected(element.name) }
            switch result {
            case .failure(let condition, let text):
                return self.fail(.bindFailed(condition: condition, text: text))
            case .success:
                return self.becomeReady(jid)
            }
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking, .authenticating, .authenticating2,
            .awaitingBoundFeatures, .registering, .ready, .closing, .failed:
            return self.unexpected(element.name)
        }
    }

    mutating func bound(_ jid: JID) -> Action {
        guard self.features?.sessionRequired == true else { return self.becomeReady(jid) }
        let id = self.ids.next()
        self.state = .establishingSession(requestID: id, jid: jid)
        return .send(Self.iq(type: "set", id: id, payload: XMLElement(name: "session", namespace: XMPPNamespace.session)))
    }

    mutating func becomeReady(_ jid: JID) -> Action {
        self.state = .ready(jid)
        return .ready(jid, self.features ?? Self.noFeatures)
    }
}
