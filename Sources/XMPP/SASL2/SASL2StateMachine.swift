/// The client side of a SASL2 exchange (XEP-0388 §2.3–§2.6), with a password or a FAST
/// token (XEP-0484 §3.4). A pure value type: the stream negotiation feeds it the server's
/// `<challenge>`, `<success>`, `<failure>` and `<continue>` elements and sends what it
/// returns.
///
/// With a password the mechanism's work is ``SASLStateMachine``'s, unchanged (selection,
/// SCRAM and its proofs); this machine carries it in SASL2's elements and adds what rides
/// along in `<authenticate>` (``SASL2Request``). With a token, the hashed-token mechanism
/// (``HashedTokenMechanism``) proves it and the server's `<success>` must prove it back. A
/// token the server refuses is not an error of the login: the machine asks for one more
/// try with the password on the same stream (both servers allow another `<authenticate>`
/// after a `<failure>`, XEP-0388 §2.6.2), where the token is forgotten.
public struct SASL2StateMachine: Sendable {
    /// What logs in.
    public enum Credential: Sendable {
        /// The password, through a fresh ``SASLStateMachine`` of the account.
        case password(SASLStateMachine)
        /// A FAST token with the channel-binding data its mechanism names (empty for NONE).
        case token(FASTToken, username: String, channelBinding: [UInt8])
    }

    public enum State: Sendable {
        case idle
        case authenticating(Credential)
        case succeeded
        case failed(SASLError)
    }

    /// What the negotiation must do next.
    public enum Action: Sendable {
        /// Send this element (`<authenticate>` or `<response>`).
        case send(XMLElement)
        /// Logged in: the server's `<success>`, for what it carries inline.
        case succeeded(SASL2Outcome.Success)
        /// The server refused the token (`condition`): forget it, and log in again with the
        /// password on this stream.
        case tokenRefused(SASLFailureCondition)
        /// The login failed; close the stream (no `<abort/>`: Prosody answers one with a
        /// stream error).
        case failed(SASLError)
    }

    public private(set) var state: State = .idle
    /// The mechanism in use, once started.
    public private(set) var mechanism: String?
    /// The channel binding of the login, once started; nil without.
    public private(set) var channelBinding: ChannelBindingChoice.ChannelBindingType?
    /// The login uses a FAST token.
    public private(set) var usesToken = false
    /// A password login's server proved with XEP-0474's `h` that nothing was stripped.
    public private(set) var downgradeProtected = false
    /// SCRAM's non-fatal findings (a low iteration count), for the caller to log.
    public private(set) var warnings: [SCRAMStateMachine.Warning] = []

    public init() {}

    /// Starts the exchange: `request` holds everything inline but the mechanism and its
    /// initial response, which come from the credential.
    public mutating func start(
        _ credential: Credential, offered: SASL2Features, tlsActive: Bool, channelBinding: ChannelBindingData, announcedTypes: [String]?,
        request: SASL2Request
    ) -> Action {
        guard case .idle = self.state else { return self.fail(.unexpectedEvent("SASL2 started twice")) }
        var request = request
        switch credential {
        case .password(var sasl):
            let started = sasl.start(
                offeredMechanisms: offered.mechanisms, tlsActive: tlsActive, channelBinding: channelBinding, announcedTypes: announcedTypes,
                profile: .sasl2
            )
            guard case .sendAuth(let mechanism, let initial) = started else {
                if case .failed(let error) = sasl.state { return self.fail(error) }
                return self.fail(.unexpectedEvent("the mechanism did not start"))
            }
            request.mechanism = mechanism
            request.initialResponse = initial
            request.usesToken = false
            self.state = .authenticating(.password(sasl))
            self.mechanism = mechanism
            self.channelBinding = sasl.channelBinding?.type
            self.usesToken = false
        case .token(let token, let username, let binding):
            guard offered.fastMechanisms?.contains(token.mechanism.rawValue) == true else {
                return self.fail(.noAcceptableMechanism(offered: offered.fastMechanisms ?? []))
            }
            request.mechanism = token.mechanism.rawValue
            request.initialResponse = HashedTokenMechanism.initialResponse(username: username, token: token.secret, channelBinding: binding)
            request.usesToken = true
            self.state = .authenticating(credential)
            self.mechanism = token.mechanism.rawValue
            self.channelBinding = token.mechanism.channelBindingType
            self.usesToken = true
        }
        return .send(request.element)
    }

    /// A server element during the exchange.
    public mutating func received(_ element: XMLElement) -> Action {
        guard case .authenticating(let credential) = self.state else {
            if case .failed(let error) = self.state { return .failed(error) }
            return self.fail(.unexpectedEvent("<\(SASLError.excerpt(element.name))> outside a SASL2 exchange"))
        }
        guard element.namespace == XMPPNamespace.sasl2 else {
            return self.fail(.unexpectedEvent("<\(SASLError.excerpt(element.name))> in \(SASLError.excerpt(element.namespace)) during SASL2"))
        }
        switch element.name {
        case "challenge":
            return self.challenge(element, credential)
        case "continue":
            // Tasks (XEP-0388 §2.6.3, e.g. SCRAM upgrades) are never asked for by us.
            return self.fail(.unexpectedEvent("<continue> with tasks the bridge never asked for"))
        default:
            do throws(SASLError) {
                return self.outcome(try SASL2Outcome(element), credential)
            } catch {
                return self.fail(error)
            }
        }
    }

    private mutating func challenge(_ element: XMLElement, _ credential: Credential) -> Action {
        guard case .password(var sasl) = credential else {
            return self.fail(.unexpectedEvent("a challenge to a hashed-token login, which has none"))
        }
        do throws(SASLError) {
            let bytes = try SASL2Base64.decode(element.text)
            let action = sasl.challengeReceived(bytes)
            self.warnings = sasl.warnings
            self.state = .authenticating(.password(sasl))
            switch action {
            case .sendResponse(let response):
                return .send(XMLElement(name: "response", namespace: XMPPNamespace.sasl2, children: [.text(SASL2Base64.encode(response))]))
            case .failed(let error):
                return self.fail(error)
            case .sendAuth, .succeeded:
                return self.fail(.unexpectedEvent("the mechanism answered a challenge with \(action)"))
            }
        } catch {
            return self.fail(error)
        }
    }

    private mutating func outcome(_ outcome: SASL2Outcome, _ credential: Credential) -> Action {
        switch (outcome, credential) {
        case (.success(let success), .password(var sasl)):
            switch sasl.successReceived(additionalData: success.additionalData ?? []) {
            case .succeeded:
                self.downgradeProtected = sasl.downgradeProtected
                self.state = .succeeded
                return .succeeded(success)
            case .failed(let error):
                return self.fail(error)
            case .sendAuth, .sendResponse:
                return self.fail(.unexpectedEvent("the mechanism did not end on <success>"))
            }
        case (.success(let success), .token(let token, _, let binding)):
            // The server proves it knows the token, on this connection, or it is not trusted.
            guard HashedTokenMechanism.verifyResponder(success.additionalData, token: token.secret, channelBinding: binding) else {
                return self.fail(success.additionalData == nil ? .missingServerSignature : .invalidServerSignature)
            }
            self.state = .succeeded
            return .succeeded(success)
        case (.failure(let condition, let text), .password):
            return self.fail(.failure(condition: condition, text: text))
        case (.failure(let condition, _), .token):
            self.state = .idle
            self.mechanism = nil
            return .tokenRefused(condition)
        }
    }

    private mutating func fail(_ error: SASLError) -> Action {
        self.state = .failed(error)
        return .failed(error)
    }
}
