/// Client-side stream negotiation as a pure state machine (RFC 6120 §4.3, §5, §6, §7):
/// stream header → features → STARTTLS → restart → SASL → restart → bind → (session) → ready,
/// or, with a stream management session to resume (XEP-0198 §5), `<resume/>` instead of
/// bind: `<resumed/>` is ready at once, `<failed/>` goes on to bind. Where the server offers
/// SASL2 (XEP-0388) and ``Configuration/sasl2`` is set, one `<authenticate>` carries the
/// login, the resumption or a Bind 2 bind (XEP-0386) and FAST (XEP-0484), with no restart
/// (`+SASL2.swift`).
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
        /// Log in with SASL2 where the server offers it; nil: RFC 6120's SASL only.
        public var sasl2: SASL2Login?

        public init(
            jid: JID, tlsMode: TLSMode, sasl: SASLConfiguration, purpose: Purpose = .login, resume: ResumeRequest? = nil, sasl2: SASL2Login? = nil
        ) {
            self.jid = jid
            self.tlsMode = tlsMode
            self.sasl = sasl
            self.purpose = purpose
            self.resume = resume
            self.sasl2 = sasl2
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
        /// A SASL2 exchange (XEP-0388): no stream restart follows it.
        case authenticating2(SASL2StateMachine)
        /// SASL2 bound the resource with Bind 2; the features of the stream come next.
        case awaitingBoundFeatures(JID)
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
        /// Write a stream header for the current stage, `from` the account's bare JID once
        /// the stream is secured (RFC 6120 §4.7.1; XEP-0388 §2.1 and XEP-0484 need it).
        case sendStreamHeader(from: JID?)
        /// Write this element.
        case send(XMLElement)
        /// `<proceed/>` arrived: check no plaintext followed it, then start TLS.
        case startTLS
        /// Reset the XML parser (at a safe point) and write a new stream header.
        case restartStream(from: JID?)
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
    let clientNonce: String
    let password: String
    var channelBinding: ChannelBindingData = .none
    /// Features of the most recent stream, handed out with ``Action/ready(_:_:)``.
    var features: StreamFeatures?
    /// The SASL mechanism that authenticated this stream, once it has (nil for FAST).
    public internal(set) var authenticatedWith: SASLMechanism?
    /// How the stream logged in, once it has.
    public internal(set) var login = LoginOutcome()
    /// The server's answer to `<resume/>` (`<resumed/>` or `<failed/>`), for the session's
    /// stream management machine; nil when no resumption was tried.
    public internal(set) var resumeAnswer: XMLElement?
    /// `<resume/>` went inline in SASL2: not tried again after it.
    var resumeSentInline = false
    /// The SASL2 request sent, for reading what `<success>` answers to it.
    var sasl2Request: SASL2Request?
    let keyCache: SCRAMKeyCache?
    /// SASL warnings (e.g. a low SCRAM iteration count) for the caller to log.
    public internal(set) var warnings: [String] = []

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
    public mutating func connected(channelBinding: ChannelBindingData = .none) -> Action {
        guard case .initial = self.state else { return self.unexpected("connected twice") }
        self.login.roundTrips += 1
        switch self.configuration.tlsMode {
        case .directTLS:
            self.channelBinding = channelBinding
            self.state = .awaitingStreamHeader(.secured)
            return .sendStreamHeader(from: self.streamFrom)
        case .startTLS, .plaintextOnLoopback:
            self.state = .awaitingStreamHeader(.plaintext)
            return .sendStreamHeader(from: nil)
        }
    }

    /// The `from` of a secured stream's header: the account, when logging in.
    var streamFrom: JID? {
        self.configuration.purpose == .login ? self.configuration.jid.bare : nil
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
        let action = self.handle(element, dataFollows: dataFollows)
        // Each element sent before the stream is ready waits for an answer: a round trip.
        if case .send = action { self.login.roundTrips += 1 }
        if case .restartStream = action { self.login.roundTrips += 1 }
        return action
    }

    /// Whether ``elementReceived(_:dataFollows:)`` with `element` now derives a key
    /// (SCRAM's server-first-message, RFC 5802 §3: PBKDF2, milliseconds of CPU): the caller
    /// may hand that event to a copy of the machine off its event loop.
    public func derivesKey(_ element: XMLElement) -> Bool {
        guard element.name == "challenge" else { return false }
        switch self.state {
        case .authenticating: return element.namespace == XMPPNamespace.sasl
        case .authenticating2: return element.namespace == XMPPNamespace.sasl2
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking, .awaitingBoundFeatures, .binding, .resuming,
            .establishingSession, .registering, .ready, .closing, .failed:
            return false
        }
    }

    private mutating func handle(_ element: XMLElement, dataFollows: Bool) -> Action {
        if element.name == "error", element.namespace == XMPPNamespace.stream {
            return self.fail(Self.streamError(from: element))
        }
        switch self.state {
        case .ready:
            // Features on an established stream are no stanza: Prosody sends them after an
            // inline SASL2 resumption, against XEP-0198's rule.
            if element.name == "features", element.namespace == XMPPNamespace.stream { return .none }
            return .emit(element)
        case .closing:
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
        case .authenticating(let sasl):
            return self.saslElementReceived(element, sasl, dataFollows: dataFollows)
        case .authenticating2(let sasl2):
            return self.sasl2ElementReceived(element, sasl2)
        case .awaitingBoundFeatures(let jid):
            guard element.name == "features", element.namespace == XMPPNamespace.stream else { return self.unexpected(element.name) }
            self.features = StreamFeatures(element)
            return self.becomeReady(jid)
        case .registering(let requestID, let submitted):
            guard let result = Self.iqResult(element, id: requestID) else { return self.unexpected(element.name) }
            return self.registrationReply(result, submitted: submitted)
        case .binding, .resuming, .establishingSession:
            return self.bindingElementReceived(element)
        case .initial, .awaitingStreamHeader, .tlsHandshaking, .failed:
            return self.unexpected(element.name)
        }
    }

    /// The TLS handshake finished: for Direct TLS the stream starts, after `<proceed/>` it restarts.
    public mutating func tlsHandshakeCompleted(channelBinding: ChannelBindingData) -> Action {
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
            .authenticating, .authenticating2, .awaitingBoundFeatures, .binding, .resuming, .establishingSession, .registering, .ready:
            self.state = .closing
            return .sendStreamClose
        }
    }

    /// The TLS handshake after `<proceed/>` finished.
    public mutating func tlsEstablished(channelBinding: ChannelBindingData) -> Action {
        guard case .tlsHandshaking = self.state else { return self.unexpected("TLS handshake") }
        self.channelBinding = channelBinding
        self.state = .awaitingStreamHeader(.secured)
        self.login.roundTrips += 1
        return .restartStream(from: self.streamFrom)
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
            .authenticating, .authenticating2, .awaitingBoundFeatures, .binding, .resuming, .establishingSession, .registering:
            return self.fail(.closedByServer)
        }
    }

    /// The negotiation deadline passed.
    public mutating func timedOut() -> Action {
        switch self.state {
        case .ready, .closing, .failed:
            return .none
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking,
            .authenticating, .authenticating2, .awaitingBoundFeatures, .binding, .resuming, .establishingSession, .registering:
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
            return self.authenticatedFeaturesReceived(features)
        }
    }

    mutating func authenticationFailed(_ error: SASLError) -> Action {
        self.fail(.authenticationFailed(account: self.configuration.jid.bare.description, error))
    }

    mutating func fail(_ error: XMPPClientError) -> Action {
        self.state = .failed(error)
        return .close(error)
    }

    mutating func closeWithStreamError(_ condition: StreamErrorCondition, _ error: XMPPClientError) -> Action {
        self.state = .failed(error)
        return .closeWithStreamError(condition, error)
    }

    mutating func unexpected(_ what: String) -> Action {
        switch self.state {
        case .failed, .closing: return .none
        case .initial, .awaitingStreamHeader, .awaitingFeatures, .awaitingProceed, .tlsHandshaking, .authenticating,
            .authenticating2, .awaitingBoundFeatures, .binding, .resuming, .establishingSession, .registering, .ready:
            break
        }
        return self.closeWithStreamError(.unsupportedStanzaType, .unexpectedElement(what))
    }

}

extension StreamNegotiationStateMachine: CustomReflectable {
    /// Mirrors only the state, so the password never appears in `dump` or debug output.
    public var customMirror: Mirror {
        Mirror(self, children: ["state": self.state], displayStyle: .struct)
    }
}
