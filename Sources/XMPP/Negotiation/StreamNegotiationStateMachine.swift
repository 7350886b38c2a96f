/// Client-side stream negotiation as a pure state machine (RFC 6120 §4.3, §5, §6, §7):
/// stream header → features → STARTTLS → restart → SASL → restart → bind → (session) → ready,
/// or, with a stream management session to resume (XEP-0198 §5), `<resume/>` instead of
/// bind: `<resumed/>` is ready at once, `<failed/>` goes on to bind.
///
/// It does no I/O. The channel handler reports what happened through the event
/// methods and carries out the returned ``Action``. TLS is never skipped when it is
/// required: without a STARTTLS offer the machine stops before any credential is sent.
public struct StreamNegotiationStateMachine: Sendable {
    /// What the negotiation needs to know up front.
    public struct Configuration: Sendable {
        /// Log in, or create the account (XEP-0077) instead of authenticating.
        public enum Purpose: Hashable, Sendable {
            case login
            case register
        }

        /// The account; a resourcepart, if present, is requested at bind time.
        public var jid: JID
        public var tlsMode: TLSMode
        public var sasl: SASLConfiguration
        public var purpose: Purpose
        /// A stream management session to resume instead of binding, if the server offers it.
        public var resume: ResumeRequest?

        public init(jid: JID, tlsMode: TLSMode, sasl: SASLConfiguration, purpose: Purpose = .login, resume: ResumeRequest? = nil) {
            self.jid = jid
            self.tlsMode = tlsMode
            self.sasl = sasl
            self.purpose = purpose
            self.resume = resume
        }
    }

    /// What `<resume/>` needs (XEP-0198 §5): the previous session's id, our inbound `h`,
    /// and the full JID it was bound to (a resumed stream keeps it).
    public struct ResumeRequest: Hashable, Sendable {
        public var previousID: String
        public var handled: UInt32
        public var jid: JID

        public init(previousID: String, handled: UInt32, jid: JID) {
            self.previousID = previousID
            self.handled = handled
            self.jid = jid
        }
    }

    /// How far the stream has come; each stage starts with a fresh stream header.
    public enum Stage: Hashable, Sendable {
        case plaintext
        case secured
        case authenticated
    }

    /// Where the negotiation is.
    public enum State: Sendable {
        case initial
        case awaitingStreamHeader(Stage)
        case awaitingFeatures(Stage)
        case awaitingProceed
        case tlsHandshaking
        case authenticating(SASLStateMachine)
        case binding(requestID: String)
        /// `<resume/>` sent; the server answers `<resumed/>` or `<failed/>`.
        case resuming(ResumeRequest)
        case establishingSession(requestID: String, jid: JID)
        /// In-band registration (XEP-0077): the form was requested, or the answer submitted.
        case registering(requestID: String, submitted: Bool)
        case ready(JID)
        /// We sent `</stream:stream>` and wait for the server's.
        case closing
        case failed(XMPPClientError)
    }

    /// What the channel handler must do next.
    public enum Action: Sendable {
        /// Nothing to do until the next event.
        case none
        /// Write a stream header for the current stage.
        case sendStreamHeader
        /// Write this element.
        case send(XMLElement)
        /// `<proceed/>` arrived: check no plaintext followed it, then start TLS.
        case startTLS
        /// Reset the XML parser (at a safe point) and write a new stream header.
        case restartStream
        /// Negotiation is complete with this full JID; the features of the final stream.
        case ready(JID, StreamFeatures)
        /// Send `<stream:error>` with this condition, close the stream, and report the error.
        case closeWithStreamError(StreamErrorCondition, XMPPClientError)
        /// Close the stream (`</stream:stream>`) and report the error.
        case close(XMPPClientError)
        /// A stanza of the negotiated stream, for the application.
        case emit(XMLElement)
        /// Write `</stream:stream>` (we are ending the session).
        case sendStreamClose
        /// Close the connection: the stream ended cleanly.
        case finish
        /// The account was created (XEP-0077); end the stream.
        case registered
    }

    public internal(set) var state: State = .initial
    let configuration: Configuration
    var ids: StanzaIDGenerator
    private let clientNonce: String
    let password: String
    private var channelBinding: [UInt8]?
    /// Features of the most recent stream, handed out with ``Action/ready(_:_:)``.
    private var features: StreamFeatures?
    /// The SASL mechanism that authenticated this stream, once it has.
    public private(set) var authenticatedWith: SASLMechanism?
    /// The server's answer to `<resume/>` (`<resumed/>` or `<failed/>`), for the session's
    /// stream management machine; nil when no resumption was tried.
    public private(set) var resumeAnswer: XMLElement?
    private let keyCache: SCRAMKeyCache?
    /// SASL warnings (e.g. a low SCRAM iteration count) for the caller to log.
    public private(set) var warnings: [String] = []

    /// - Parameters:
    ///   - password: used only to build SASL messages; never part of any description.
    ///   - clientNonce: fresh random SCRAM nonce (injected so tests are deterministic).
    ///   - keyCache: SCRAM salted passwords derived on earlier connections of this account.
    public init(configuration: Configuration, password: String, clientNonce: String, ids: StanzaIDGenerator, keyCache: SCRAMKeyCache? = nil) {
        self.configuration = configuration
        self.password = password
        self.clientNonce = clientNonce
        self.ids = ids
        self.keyCache = keyCache
    }

    // MARK: - Events

    /// The transport is connected (for Direct TLS: the TLS handshake is done).
    public mutating func connected(channelBinding: [UInt8]? = nil) -> Action {
        guard case .initial = self.state else { return self.unexpected("connected twice") }
        switch self.configuration.tlsMode {
        case .directTLS:
            self.channelBinding = channelBinding
            self.state = .awaitingStreamHeader(.secured)
        case .startTLS, .plaintextOnLoopback:
            self.state = .awaitingStreamHeader(.plaintext)
        }
        return .sendStreamHeader
    }

    /// The server's `<stream:stream>` header arrived.
    public mutating func streamOpened(attributes: [XMLAttribute]) -> Action {
        guard case .awaitingStreamHeader(let stage) = self.state else {
            return self.unexpected("stream header")
        }
        let version = attributes.first(where: { $0.name == "version" })?.value ?? "0.9"
        let majorText = version.prefix(while: { $0 != "." })
        guard !majorText.isEmpty, majorText.allSatisfy({ ("0"..."9").contains($0) }), let major = Int(majorText), major >= 1 else {
            return self.closeWithStreamError(.unsupportedVersion, .unexpectedElement("stream version \(version)"))
        }
        self.state = .awaitingFeatures(stage)
        return .none
    }

    /// A complete first-level element arrived. `dataFollows` says whether more bytes came
    /// after it in the same read: after `<proceed/>` and `<success/>` nothing may
    /// (RFC 6120 §5.4.3.3, §6.4.6).
    public mutating func elementReceived(_ element: XMLElement, dataFollows: Bool = false) -> Action {
        if element.name == "error", element.namespace == XMPPNamespace.stream {
            return self.fail(Self.streamError(from: element))
        }
        switch self.state {
        case .ready, .closing:
            return .emit(element)
        case .awaitingFeatures(let stage):
            guard element.name == "features", element.namespace == XMPPNamespace.stream else {
                return self.unexpected(element.name)
            }
            let features = StreamFeatures(element)
            self.features = features
            return self.featuresReceived(features, stage: stage)
        case .awaitingProceed:
            guard element.namespace == XMPPNamespace.tls else { return self.unexpected(element.name) }
            switch element.name {
            case "proceed":
                guard !dataFollows else { return self.fail(.tls(TLSError(.unencryptedDataAfterProceed))) }
                self.state = .tlsHandshaking
                return .startTLS
            case "failure":
                return self.fail(.startTLSRefused)
            default:
                return self.unexpected(element.name)
            }
        case .authenticating(var sasl):
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
        case .registering(let requestID, let submitted):
            guard let result = Self.iqResult(element, id: requestID) else { return self.unexpected(element.name) }
            return self.registrationReply(result, submitted: submitted)
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
                return self.startBinding(self.features ?? StreamFeatures(XMLElement(name: "features", namespace: XMPPNamespace.stream)))
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
        case .initial, .awaitingStreamHeader, .tlsHandshaking, .failed:
            return self.unexpected(element.name)
        }
    }

    /// The TLS handshake finished: for Direct TLS the stream starts, after `<proceed/>` it restarts.
    public mutating func tlsHandshakeCompleted(channelBinding: [UInt8]?) -> Action {
        if case .initial = self.state {
            return self.connected(channelBinding: channelBinding)
        }
        return self.tlsEstablished(channelBinding: channelBinding)
    }

    /// We want to end the session (RFC 6120 §4.4).
    public mutating func closeRequested() -> Action {
        switch self.state {
        case .closing, .failed:
            return .none
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking,
            .authenticating, .binding, .resuming, .establishingSession, .registering, .ready:
            self.state = .closing
            return .sendStreamClose
        }
    }

    /// The TLS handshake after `<proceed/>` finished.
    public mutating func tlsEstablished(channelBinding: [UInt8]?) -> Action {
        guard case .tlsHandshaking = self.state else { return self.unexpected("TLS handshake") }
        self.channelBinding = channelBinding
        self.state = .awaitingStreamHeader(.secured)
        return .restartStream
    }

    /// The TLS layer failed (handshake, certificate, or session).
    public mutating func tlsFailed(_ error: TLSError) -> Action {
        self.fail(.tls(error))
    }

    /// Our XML decoder rejected the server's bytes.
    public mutating func decodingFailed(_ error: XMLStreamError) -> Action {
        self.closeWithStreamError(error.condition, .invalidServerXML(error))
    }

    /// The server sent `</stream:stream>`: on an established stream, the server ended it
    /// itself (``XMPPClientError/streamClosedByServer``); otherwise as ``streamClosed()``.
    public mutating func streamEndReceived() -> Action {
        guard case .ready = self.state else { return self.streamClosed() }
        return self.fail(.streamClosedByServer)
    }

    /// The connection closed (or, before the stream was established, the server sent
    /// `</stream:stream>`).
    public mutating func streamClosed() -> Action {
        switch self.state {
        case .failed:
            return .none
        case .closing:
            return .finish
        case .ready:
            return self.fail(.closedByServer)
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking,
            .authenticating, .binding, .resuming, .establishingSession, .registering:
            return self.fail(.closedByServer)
        }
    }

    /// The negotiation deadline passed.
    public mutating func timedOut() -> Action {
        switch self.state {
        case .ready, .closing, .failed:
            return .none
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking,
            .authenticating, .binding, .resuming, .establishingSession, .registering:
            return self.closeWithStreamError(.connectionTimeout, .timedOut("stream negotiation"))
        }
    }

    // MARK: - Steps

    private mutating func featuresReceived(_ features: StreamFeatures, stage: Stage) -> Action {
        switch stage {
        case .plaintext:
            if features.startTLS {
                self.state = .awaitingProceed
                return .send(XMLElement(name: "starttls", namespace: XMPPNamespace.tls))
            }
            switch self.configuration.tlsMode {
            case .startTLS, .directTLS:
                return self.fail(.tlsNotOffered)
            case .plaintextOnLoopback:
                return self.startAuthentication(features, tlsActive: false)
            }
        case .secured:
            return self.startAuthentication(features, tlsActive: true)
        case .authenticated:
            if let resume = self.configuration.resume,
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
    }

    private mutating func startBinding(_ features: StreamFeatures) -> Action {
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

    private mutating func startAuthentication(_ features: StreamFeatures, tlsActive: Bool) -> Action {
        switch self.configuration.purpose {
        case .register: return self.startRegistration(features)
        case .login: break
        }
        var sasl = SASLStateMachine(
            username: self.configuration.jid.localpart ?? "",
            password: self.password,
            clientNonce: self.clientNonce,
            configuration: self.configuration.sasl,
            keyCache: self.keyCache
        )
        // Bind to the channel only where the server says it understands tls-exporter (XEP-0440).
        let binding = features.channelBindingTypes.contains("tls-exporter") ? self.channelBinding : nil
        let action = sasl.start(offeredMechanisms: features.mechanisms, tlsActive: tlsActive, channelBindingData: binding)
        self.state = .authenticating(sasl)
        return self.run(action)
    }

    private mutating func run(_ action: SASLStateMachine.Action) -> Action {
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
            self.state = .awaitingStreamHeader(.authenticated)
            return .restartStream
        case .failed(let error):
            return self.authenticationFailed(error)
        }
    }

    private mutating func bound(_ jid: JID) -> Action {
        guard self.features?.sessionRequired == true else { return self.becomeReady(jid) }
        let id = self.ids.next()
        self.state = .establishingSession(requestID: id, jid: jid)
        return .send(Self.iq(type: "set", id: id, payload: XMLElement(name: "session", namespace: XMPPNamespace.session)))
    }

    private mutating func becomeReady(_ jid: JID) -> Action {
        self.state = .ready(jid)
        return .ready(jid, self.features ?? StreamFeatures(XMLElement(name: "features", namespace: XMPPNamespace.stream)))
    }

    private mutating func authenticationFailed(_ error: SASLError) -> Action {
        self.fail(.authenticationFailed(account: self.configuration.jid.bare.description, error))
    }

    mutating func fail(_ error: XMPPClientError) -> Action {
        self.state = .failed(error)
        return .close(error)
    }

    private mutating func closeWithStreamError(_ condition: StreamErrorCondition, _ error: XMPPClientError) -> Action {
        self.state = .failed(error)
        return .closeWithStreamError(condition, error)
    }

    private mutating func unexpected(_ what: String) -> Action {
        switch self.state {
        case .failed, .closing: return .none
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking, .authenticating,
            .binding, .resuming, .establishingSession, .registering, .ready:
            break
        }
        return self.closeWithStreamError(.unsupportedStanzaType, .unexpectedElement(what))
    }

    // MARK: - Element helpers

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

    private static func iqResult(_ element: XMLElement, id: String) -> IQResult? {
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
}

extension StreamNegotiationStateMachine: CustomReflectable {
    /// Mirrors only the state, so the password never appears in `dump` or debug output.
    public var customMirror: Mirror {
        Mirror(self, children: ["state": self.state], displayStyle: .struct)
    }
}
