import Foundation
import Testing

@testable import XMPP

/// Stream negotiation driven event by event (RFC 6120 §4.3, §5, §6, §7; XEP-0440),
/// asserting the exact action returned at every step. SCRAM runs use the RFC 7677
/// test vectors (user `user`, password `pencil`, client nonce `rOprNGfwEbeRWgbNEkqO`).
@Suite("StreamNegotiationStateMachine")
struct StreamNegotiationStateMachineTests {
    typealias Machine = StreamNegotiationStateMachine
    typealias Action = Machine.Action

    // MARK: - Fixtures

    static let account = "user@example.com"
    static let password = "pencil"
    static let nonce = "rOprNGfwEbeRWgbNEkqO"
    static let clientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    static let serverFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    static let clientFinal =
        "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    static let serverFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    static let allMechanisms = ["SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"]
    static let exporter = [UInt8](repeating: 0x5A, count: 32)
    static let header = [
        XMLAttribute(name: "from", value: "example.com"),
        XMLAttribute(name: "id", value: "s1"),
        XMLAttribute(name: "version", value: "1.0"),
    ]

    static func machine(
        jid: String = account,
        tlsMode: TLSMode = .startTLS,
        sasl: SASLConfiguration = SASLConfiguration(),
        password: String = password
    ) throws -> Machine {
        Machine(
            configuration: .init(jid: try JID(jid), tlsMode: tlsMode, sasl: sasl),
            password: password,
            clientNonce: nonce,
            ids: StanzaIDGenerator(prefix: "t")
        )
    }

    // MARK: - Actions as comparable values

    /// `Action` is not Equatable; this mirror of it is, with sent elements normalised
    /// (attributes sorted) so attribute order does not matter.
    enum Step: Hashable {
        case none
        case sendStreamHeader
        case send(XMLElement)
        case startTLS
        case restartStream
        case ready(JID, StreamFeatures)
        case closeWithStreamError(StreamErrorCondition, XMPPClientError)
        case close(XMPPClientError)

        init(_ action: Action) {
            switch action {
            case .none: self = .none
            case .sendStreamHeader: self = .sendStreamHeader
            case .send(let element): self = .send(normalized(element))
            case .startTLS: self = .startTLS
            case .restartStream: self = .restartStream
            case .ready(let jid, let features): self = .ready(jid, features)
            case .closeWithStreamError(let condition, let error): self = .closeWithStreamError(condition, error)
            case .close(let error): self = .close(error)
            }
        }

        static func sending(_ element: XMLElement) -> Step { .send(normalized(element)) }
    }

    /// The element a `.send` action carries, recording an issue for any other action.
    static func sent(_ action: Action, sourceLocation: SourceLocation = #_sourceLocation) -> XMLElement? {
        guard case .send(let element) = action else {
            Issue.record("expected .send, got \(Step(action))", sourceLocation: sourceLocation)
            return nil
        }
        return element
    }

    /// A comparable summary of the state (State is not Equatable: it holds the SASL machine).
    static func summary(_ state: Machine.State) -> String {
        switch state {
        case .initial: "initial"
        case .awaitingStreamHeader(let stage): "awaitingStreamHeader(\(stage))"
        case .awaitingFeatures(let stage): "awaitingFeatures(\(stage))"
        case .awaitingProceed: "awaitingProceed"
        case .tlsHandshaking: "tlsHandshaking"
        case .authenticating(let sasl): "authenticating(\(sasl.selectedMechanism?.rawValue ?? "-"))"
        case .binding(let id): "binding(\(id))"
        case .establishingSession(let id, let jid): "establishingSession(\(id), \(jid))"
        case .ready(let jid): "ready(\(jid))"
        case .failed(let error): "failed(\(error))"
        }
    }

    static func failure(of state: Machine.State) -> XMPPClientError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    // MARK: - Element builders

    static func element(
        _ name: String,
        _ namespace: String,
        attributes: [(String, String)] = [],
        children: [XMLElement] = [],
        text: String? = nil
    ) -> XMLElement {
        var nodes = children.map(XMLNode.element)
        if let text { nodes.append(.text(text)) }
        return XMLElement(
            name: name, namespace: namespace,
            attributes: attributes.map { XMLAttribute(name: $0.0, value: $0.1) }, children: nodes
        )
    }

    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    static func decoded(_ text: String) -> String? {
        Data(base64Encoded: text).map { String(decoding: $0, as: UTF8.self) }
    }

    enum Session { case absent, required, optional }

    static func features(
        startTLS: Bool = false,
        mechanisms: [String] = [],
        channelBindingTypes: [String]? = nil,
        bind: Bool = false,
        session: Session = .absent
    ) -> XMLElement {
        var children: [XMLElement] = []
        if startTLS {
            children.append(element("starttls", XMPPNamespace.tls, children: [element("required", XMPPNamespace.tls)]))
        }
        if !mechanisms.isEmpty {
            children.append(
                element("mechanisms", XMPPNamespace.sasl, children: mechanisms.map { element("mechanism", XMPPNamespace.sasl, text: $0) })
            )
        }
        if let channelBindingTypes {
            children.append(
                element(
                    "sasl-channel-binding", XMPPNamespace.saslChannelBinding,
                    children: channelBindingTypes.map {
                        element("channel-binding", XMPPNamespace.saslChannelBinding, attributes: [("type", $0)])
                    }
                )
            )
        }
        if bind { children.append(element("bind", XMPPNamespace.bind)) }
        switch session {
        case .absent: break
        case .required: children.append(element("session", XMPPNamespace.session))
        case .optional:
            children.append(element("session", XMPPNamespace.session, children: [element("optional", XMPPNamespace.session)]))
        }
        return element("features", XMPPNamespace.stream, children: children)
    }

    static let proceed = element("proceed", XMPPNamespace.tls)
    static let starttls = element("starttls", XMPPNamespace.tls)

    static func challenge(_ message: String) -> XMLElement { element("challenge", XMPPNamespace.sasl, text: base64(message)) }
    static func success(_ message: String?) -> XMLElement {
        element("success", XMPPNamespace.sasl, text: message.map(base64))
    }
    static func auth(_ mechanism: String, _ initial: String) -> XMLElement {
        element("auth", XMPPNamespace.sasl, attributes: [("mechanism", mechanism)], text: base64(initial))
    }
    static func response(_ message: String) -> XMLElement { element("response", XMPPNamespace.sasl, text: base64(message)) }

    static func iq(_ type: String, _ id: String, _ payload: [XMLElement] = []) -> XMLElement {
        element("iq", XMPPNamespace.client, attributes: [("type", type), ("id", id)], children: payload)
    }

    static func bindRequest(_ id: String, resource: String? = nil) -> XMLElement {
        iq("set", id, [element("bind", XMPPNamespace.bind, children: resource.map { [element("resource", XMPPNamespace.bind, text: $0)] } ?? [])])
    }

    static func bindResult(_ id: String, jid: String?) -> XMLElement {
        iq("result", id, [element("bind", XMPPNamespace.bind, children: jid.map { [element("jid", XMPPNamespace.bind, text: $0)] } ?? [])])
    }

    static func iqError(_ id: String, condition: String, text: String? = nil) -> XMLElement {
        var conditions = [element(condition, XMPPNamespace.stanzas)]
        if let text { conditions.append(element("text", XMPPNamespace.stanzas, text: text)) }
        return iq("error", id, [element("error", XMPPNamespace.client, attributes: [("type", "cancel")], children: conditions)])
    }

    static func streamError(_ condition: String, text: String? = nil) -> XMLElement {
        var children = [element(condition, XMPPNamespace.streamErrors)]
        if let text { children.append(element("text", XMPPNamespace.streamErrors, text: text)) }
        return element("error", XMPPNamespace.stream, children: children)
    }

    // MARK: - Drivers (each step asserted)

    /// connected → header → features(starttls) → proceed → TLS done → header: awaiting secured features.
    static func driveToSecuredFeatures(
        _ machine: inout Machine,
        channelBinding: [UInt8]? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(Step(machine.connected()) == .sendStreamHeader, sourceLocation: sourceLocation)
        #expect(Step(machine.streamOpened(attributes: header)) == .none, sourceLocation: sourceLocation)
        #expect(
            Step(machine.elementReceived(features(startTLS: true, mechanisms: allMechanisms))) == .sending(starttls),
            sourceLocation: sourceLocation
        )
        #expect(Step(machine.elementReceived(proceed)) == .startTLS, sourceLocation: sourceLocation)
        #expect(Step(machine.tlsEstablished(channelBinding: channelBinding)) == .restartStream, sourceLocation: sourceLocation)
        #expect(Step(machine.streamOpened(attributes: header)) == .none, sourceLocation: sourceLocation)
        #expect(summary(machine.state) == "awaitingFeatures(secured)", sourceLocation: sourceLocation)
    }

    /// Secured stream, SCRAM-SHA-256 `<auth/>` sent: awaiting the server-first-message.
    static func driveToAuthenticating(_ machine: inout Machine, sourceLocation: SourceLocation = #_sourceLocation) {
        driveToSecuredFeatures(&machine, sourceLocation: sourceLocation)
        #expect(
            Step(machine.elementReceived(features(mechanisms: allMechanisms))) == .sending(auth("SCRAM-SHA-256", clientFirst)),
            sourceLocation: sourceLocation
        )
    }

    /// Full RFC 7677 SCRAM exchange and restart: awaiting the features of the authenticated stream.
    static func driveToAuthenticatedFeatures(_ machine: inout Machine, sourceLocation: SourceLocation = #_sourceLocation) {
        driveToAuthenticating(&machine, sourceLocation: sourceLocation)
        #expect(
            Step(machine.elementReceived(challenge(serverFirst))) == .sending(response(clientFinal)),
            sourceLocation: sourceLocation
        )
        #expect(Step(machine.elementReceived(success(serverFinal))) == .restartStream, sourceLocation: sourceLocation)
        #expect(Step(machine.streamOpened(attributes: header)) == .none, sourceLocation: sourceLocation)
        #expect(summary(machine.state) == "awaitingFeatures(authenticated)", sourceLocation: sourceLocation)
    }

    /// Authenticated stream with `finalFeatures`, bind request `t-1` sent.
    static func driveToBinding(
        _ machine: inout Machine,
        finalFeatures: XMLElement = features(bind: true),
        resource: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        driveToAuthenticatedFeatures(&machine, sourceLocation: sourceLocation)
        #expect(
            Step(machine.elementReceived(finalFeatures)) == .sending(bindRequest("t-1", resource: resource)),
            sourceLocation: sourceLocation
        )
        #expect(summary(machine.state) == "binding(t-1)", sourceLocation: sourceLocation)
    }

    // MARK: - Happy paths

    @Test("STARTTLS, SCRAM-SHA-256 (RFC 7677 vectors) and bind: every action exact")
    func happyPathStartTLS() throws {
        var machine = try Self.machine()
        #expect(Self.summary(machine.state) == "initial")

        #expect(Step(machine.connected()) == .sendStreamHeader)
        #expect(Self.summary(machine.state) == "awaitingStreamHeader(plaintext)")
        #expect(Step(machine.streamOpened(attributes: Self.header)) == .none)
        #expect(Self.summary(machine.state) == "awaitingFeatures(plaintext)")

        let plainFeatures = Self.features(startTLS: true, mechanisms: Self.allMechanisms)
        let starttls = try #require(Self.sent(machine.elementReceived(plainFeatures)))
        #expect(starttls.name == "starttls")
        #expect(starttls.namespace == "urn:ietf:params:xml:ns:xmpp-tls")
        #expect(starttls.children.isEmpty)
        #expect(Self.summary(machine.state) == "awaitingProceed")

        #expect(Step(machine.elementReceived(Self.proceed)) == .startTLS)
        #expect(Self.summary(machine.state) == "tlsHandshaking")
        #expect(Step(machine.tlsEstablished(channelBinding: nil)) == .restartStream)
        #expect(Self.summary(machine.state) == "awaitingStreamHeader(secured)")
        #expect(Step(machine.streamOpened(attributes: Self.header)) == .none)

        let auth = try #require(
            Self.sent(machine.elementReceived(Self.features(mechanisms: ["SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"])))
        )
        #expect(auth.name == "auth")
        #expect(auth.namespace == "urn:ietf:params:xml:ns:xmpp-sasl")
        #expect(auth[attribute: "mechanism"] == "SCRAM-SHA-256")
        #expect(Self.decoded(auth.text) == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        #expect(Self.summary(machine.state) == "authenticating(SCRAM-SHA-256)")

        let response = try #require(Self.sent(machine.elementReceived(Self.challenge(Self.serverFirst))))
        #expect(response.name == "response")
        #expect(response.namespace == XMPPNamespace.sasl)
        #expect(Self.decoded(response.text) == Self.clientFinal)

        #expect(Step(machine.elementReceived(Self.success(Self.serverFinal))) == .restartStream)
        #expect(Self.summary(machine.state) == "awaitingStreamHeader(authenticated)")
        #expect(Step(machine.streamOpened(attributes: Self.header)) == .none)

        let finalFeatures = Self.features(bind: true)
        let bind = try #require(Self.sent(machine.elementReceived(finalFeatures)))
        #expect(bind.name == "iq")
        #expect(bind.namespace == XMPPNamespace.client)
        #expect(bind[attribute: "type"] == "set")
        #expect(bind[attribute: "id"] == "t-1")
        #expect(bind.elements == [XMLElement(name: "bind", namespace: "urn:ietf:params:xml:ns:xmpp-bind")])

        let ready = machine.elementReceived(Self.bindResult("t-1", jid: "user@example.com/abc"))
        let jid = try JID("user@example.com/abc")
        #expect(Step(ready) == .ready(jid, StreamFeatures(finalFeatures)))
        #expect(Self.summary(machine.state) == "ready(user@example.com/abc)")
        guard case .ready(let stateJID) = machine.state else {
            Issue.record("not ready: \(Self.summary(machine.state))")
            return
        }
        #expect(stateJID == jid)
        #expect(machine.warnings.isEmpty)
    }

    @Test("the server-final-message may arrive in a challenge, then an empty <success/> (RFC 6120 §6.3.10)")
    func serverFinalInChallenge() throws {
        var machine = try Self.machine()
        Self.driveToAuthenticating(&machine)
        #expect(Step(machine.elementReceived(Self.challenge(Self.serverFirst))) == .sending(Self.response(Self.clientFinal)))
        let empty = Self.element("response", XMPPNamespace.sasl, text: "=")
        #expect(Step(machine.elementReceived(Self.challenge(Self.serverFinal))) == .sending(empty))
        #expect(Step(machine.elementReceived(Self.success(nil))) == .restartStream)
        #expect(Self.summary(machine.state) == "awaitingStreamHeader(authenticated)")
    }

    @Test("a required session (no <optional/>) is established after bind")
    func sessionRequired() throws {
        var machine = try Self.machine()
        let finalFeatures = Self.features(bind: true, session: .required)
        #expect(StreamFeatures(finalFeatures).sessionRequired)
        Self.driveToBinding(&machine, finalFeatures: finalFeatures)

        let session = Self.iq("set", "t-2", [Self.element("session", "urn:ietf:params:xml:ns:xmpp-session")])
        #expect(Step(machine.elementReceived(Self.bindResult("t-1", jid: "user@example.com/abc"))) == .sending(session))
        #expect(Self.summary(machine.state) == "establishingSession(t-2, user@example.com/abc)")

        // A result for another id is not the answer.
        var other = machine
        #expect(
            Step(other.elementReceived(Self.iq("result", "t-1")))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("iq"))
        )

        #expect(
            Step(machine.elementReceived(Self.iq("result", "t-2")))
                == .ready(try JID("user@example.com/abc"), StreamFeatures(finalFeatures))
        )
        #expect(Self.summary(machine.state) == "ready(user@example.com/abc)")
    }

    @Test("an <optional/> session is skipped: ready right after bind")
    func sessionOptional() throws {
        var machine = try Self.machine()
        let finalFeatures = Self.features(bind: true, session: .optional)
        #expect(!StreamFeatures(finalFeatures).sessionRequired)
        Self.driveToBinding(&machine, finalFeatures: finalFeatures)
        #expect(
            Step(machine.elementReceived(Self.bindResult("t-1", jid: "user@example.com/abc")))
                == .ready(try JID("user@example.com/abc"), StreamFeatures(finalFeatures))
        )
    }

    @Test("a refused session IQ fails like binding")
    func sessionRefused() throws {
        var machine = try Self.machine()
        Self.driveToBinding(&machine, finalFeatures: Self.features(bind: true, session: .required))
        _ = machine.elementReceived(Self.bindResult("t-1", jid: "user@example.com/abc"))
        #expect(
            Step(machine.elementReceived(Self.iqError("t-2", condition: "internal-server-error", text: "nope")))
                == .close(.bindFailed(condition: "internal-server-error", text: "nope"))
        )
    }

    @Test("a resource in the configured JID is requested at bind time")
    func configuredResource() throws {
        var machine = try Self.machine(jid: "user@example.com/bridge")
        Self.driveToAuthenticatedFeatures(&machine)
        let bind = try #require(Self.sent(machine.elementReceived(Self.features(bind: true))))
        #expect(normalized(bind) == normalized(Self.bindRequest("t-1", resource: "bridge")))
        let resource = bind.firstChild(named: "bind", namespace: XMPPNamespace.bind)?
            .firstChild(named: "resource", namespace: XMPPNamespace.bind)
        #expect(resource?.text == "bridge")
        // The server may assign another resource; its JID wins.
        #expect(
            Step(machine.elementReceived(Self.bindResult("t-1", jid: "user@example.com/bridge-42")))
                == .ready(try JID("user@example.com/bridge-42"), StreamFeatures(Self.features(bind: true)))
        )
    }

    @Test("Direct TLS starts secured: features lead straight to <auth/>")
    func directTLS() throws {
        var machine = try Self.machine(tlsMode: .directTLS)
        #expect(Step(machine.connected(channelBinding: nil)) == .sendStreamHeader)
        #expect(Self.summary(machine.state) == "awaitingStreamHeader(secured)")
        #expect(Step(machine.streamOpened(attributes: Self.header)) == .none)
        #expect(
            Step(machine.elementReceived(Self.features(mechanisms: Self.allMechanisms)))
                == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst))
        )
    }

    @Test("Direct TLS: PLAIN is allowed because the stream is already encrypted")
    func directTLSPlain() throws {
        var machine = try Self.machine(tlsMode: .directTLS)
        _ = machine.connected()
        _ = machine.streamOpened(attributes: Self.header)
        #expect(
            Step(machine.elementReceived(Self.features(mechanisms: ["PLAIN"])))
                == .sending(Self.auth("PLAIN", "\0user\0pencil"))
        )
        #expect(Step(machine.elementReceived(Self.success(nil))) == .restartStream)
    }

    // MARK: - TLS policy

    @Test("STARTTLS required but not offered: close with tlsNotOffered, never send <auth/>")
    func startTLSNotOffered() throws {
        var machine = try Self.machine(tlsMode: .startTLS, sasl: SASLConfiguration(allowPlainWithoutTLS: true))
        var steps: [Step] = []
        steps.append(Step(machine.connected()))
        steps.append(Step(machine.streamOpened(attributes: Self.header)))
        steps.append(Step(machine.elementReceived(Self.features(mechanisms: Self.allMechanisms, bind: true))))
        #expect(steps == [.sendStreamHeader, .none, .close(.tlsNotOffered)])
        #expect(Self.failure(of: machine.state) == .tlsNotOffered)

        // Whatever a (STARTTLS-stripping) server sends next, nothing more is sent.
        steps = []
        steps.append(Step(machine.elementReceived(Self.features(mechanisms: ["PLAIN"]))))
        steps.append(Step(machine.elementReceived(Self.challenge(Self.serverFirst))))
        steps.append(Step(machine.elementReceived(Self.success(nil))))
        steps.append(Step(machine.streamOpened(attributes: Self.header)))
        steps.append(Step(machine.streamClosed()))
        steps.append(Step(machine.timedOut()))
        #expect(steps == [.none, .none, .none, .none, .none, .none])
        #expect(Self.failure(of: machine.state) == .tlsNotOffered)
    }

    @Test("plaintextOnLoopback without STARTTLS: PLAIN only when allowPlainWithoutTLS")
    func plaintextOnLoopbackPlainAllowed() throws {
        var machine = try Self.machine(tlsMode: .plaintextOnLoopback, sasl: SASLConfiguration(allowPlainWithoutTLS: true))
        #expect(Step(machine.connected()) == .sendStreamHeader)
        #expect(Step(machine.streamOpened(attributes: Self.header)) == .none)
        #expect(
            Step(machine.elementReceived(Self.features(mechanisms: ["PLAIN"])))
                == .sending(Self.auth("PLAIN", "\0user\0pencil"))
        )
        #expect(Step(machine.elementReceived(Self.success(nil))) == .restartStream)
        #expect(Self.summary(machine.state) == "awaitingStreamHeader(authenticated)")
    }

    @Test("plaintextOnLoopback without STARTTLS and the default SASL policy refuses PLAIN")
    func plaintextOnLoopbackPlainRefused() throws {
        var machine = try Self.machine(tlsMode: .plaintextOnLoopback)
        _ = machine.connected()
        _ = machine.streamOpened(attributes: Self.header)
        #expect(
            Step(machine.elementReceived(Self.features(mechanisms: ["PLAIN"])))
                == .close(.authenticationFailed(account: "user@example.com", .plainWithoutTLS))
        )
    }

    @Test("plaintextOnLoopback without STARTTLS: SCRAM runs unbound ('n,,')")
    func plaintextOnLoopbackSCRAM() throws {
        var machine = try Self.machine(tlsMode: .plaintextOnLoopback)
        _ = machine.connected(channelBinding: Self.exporter)
        _ = machine.streamOpened(attributes: Self.header)
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: ["tls-exporter"])
        #expect(Step(machine.elementReceived(offered)) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
    }

    @Test("plaintextOnLoopback still upgrades when STARTTLS is offered")
    func plaintextOnLoopbackUpgrades() throws {
        var machine = try Self.machine(tlsMode: .plaintextOnLoopback, sasl: SASLConfiguration(allowPlainWithoutTLS: true))
        _ = machine.connected()
        _ = machine.streamOpened(attributes: Self.header)
        #expect(Step(machine.elementReceived(Self.features(startTLS: true, mechanisms: ["PLAIN"]))) == .sending(Self.starttls))
        #expect(Step(machine.elementReceived(Self.proceed)) == .startTLS)
    }

    @Test("<failure/> in the TLS namespace answers <starttls/>: startTLSRefused")
    func startTLSRefused() throws {
        var machine = try Self.machine()
        _ = machine.connected()
        _ = machine.streamOpened(attributes: Self.header)
        _ = machine.elementReceived(Self.features(startTLS: true, mechanisms: Self.allMechanisms))
        #expect(Step(machine.elementReceived(Self.element("failure", XMPPNamespace.tls))) == .close(.startTLSRefused))
        #expect(Self.failure(of: machine.state) == .startTLSRefused)
    }

    @Test("a SASL <failure/> (wrong namespace) or a challenge while awaiting <proceed/> is unexpected")
    func awaitingProceedUnexpected() throws {
        for (element, name) in [
            (Self.element("failure", XMPPNamespace.sasl), "failure"),
            (Self.challenge("x"), "challenge"),
            (Self.element("success", XMPPNamespace.tls), "success"),
        ] {
            var machine = try Self.machine()
            _ = machine.connected()
            _ = machine.streamOpened(attributes: Self.header)
            _ = machine.elementReceived(Self.features(startTLS: true, mechanisms: Self.allMechanisms))
            #expect(Step(machine.elementReceived(element)) == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement(name)))
        }
    }

    @Test("a TLS failure closes with the TLS error")
    func tlsFailed() throws {
        var machine = try Self.machine()
        _ = machine.connected()
        _ = machine.streamOpened(attributes: Self.header)
        _ = machine.elementReceived(Self.features(startTLS: true, mechanisms: Self.allMechanisms))
        _ = machine.elementReceived(Self.proceed)
        let error = TLSError(.certificateRejected, certificateVerification: "hostname mismatch")
        #expect(Step(machine.tlsFailed(error)) == .close(.tls(error)))
        #expect(Self.failure(of: machine.state) == .tls(error))
    }

    // MARK: - SASL failures

    @Test("SASL <failure/> maps condition and text; the account is the bare JID")
    func saslFailure() throws {
        var machine = try Self.machine(jid: "user@example.com/bridge")
        Self.driveToAuthenticating(&machine)
        let failure = Self.element(
            "failure", XMPPNamespace.sasl,
            children: [
                Self.element("not-authorized", XMPPNamespace.sasl),
                Self.element("text", XMPPNamespace.sasl, attributes: [("xml:lang", "en")], text: "bad"),
            ]
        )
        let expected = XMPPClientError.authenticationFailed(
            account: "user@example.com", .failure(condition: .notAuthorized, text: "bad")
        )
        #expect(Step(machine.elementReceived(failure)) == .close(expected))
        #expect(Self.failure(of: machine.state) == expected)
    }

    @Test("SASL <failure/> with other or unknown conditions", arguments: [
        ("account-disabled", SASLFailureCondition.accountDisabled),
        ("temporary-auth-failure", .temporaryAuthFailure),
        ("x-unknown", .notAuthorized),
    ])
    func saslFailureConditions(name: String, condition: SASLFailureCondition) throws {
        var machine = try Self.machine()
        Self.driveToAuthenticating(&machine)
        let failure = Self.element("failure", XMPPNamespace.sasl, children: [Self.element(name, XMPPNamespace.sasl)])
        #expect(
            Step(machine.elementReceived(failure))
                == .close(.authenticationFailed(account: "user@example.com", .failure(condition: condition, text: nil)))
        )
    }

    @Test("a wrong server signature in <success/> fails authentication")
    func wrongServerSignature() throws {
        var machine = try Self.machine()
        Self.driveToAuthenticating(&machine)
        _ = machine.elementReceived(Self.challenge(Self.serverFirst))
        let forged = "v=" + Data(repeating: 0, count: 32).base64EncodedString()
        #expect(
            Step(machine.elementReceived(Self.success(forged)))
                == .close(.authenticationFailed(account: "user@example.com", .invalidServerSignature))
        )
        #expect(Self.summary(machine.state).hasPrefix("failed("))
    }

    @Test("<success/> without the SCRAM server signature fails authentication")
    func missingServerSignature() throws {
        var machine = try Self.machine()
        Self.driveToAuthenticating(&machine)
        _ = machine.elementReceived(Self.challenge(Self.serverFirst))
        #expect(
            Step(machine.elementReceived(Self.success(nil)))
                == .close(.authenticationFailed(account: "user@example.com", .missingServerSignature))
        )
    }

    @Test("a challenge that is not base64 fails authentication")
    func invalidBase64Challenge() throws {
        var machine = try Self.machine()
        Self.driveToAuthenticating(&machine)
        let challenge = Self.element("challenge", XMPPNamespace.sasl, text: "not*base64!")
        #expect(
            Step(machine.elementReceived(challenge))
                == .close(.authenticationFailed(account: "user@example.com", .invalidBase64))
        )
    }

    @Test("no acceptable mechanism fails before anything is sent")
    func noAcceptableMechanism() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine)
        #expect(
            Step(machine.elementReceived(Self.features(mechanisms: ["X-OAUTH2"])))
                == .close(.authenticationFailed(account: "user@example.com", .noAcceptableMechanism(offered: ["X-OAUTH2"])))
        )
    }

    @Test("a low SCRAM iteration count is reported as a warning")
    func lowIterationWarning() throws {
        var machine = try Self.machine()
        Self.driveToAuthenticating(&machine)
        let weak = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1024"
        _ = try #require(Self.sent(machine.elementReceived(Self.challenge(weak))))
        #expect(machine.warnings.count == 1)
        #expect(machine.warnings.first?.contains("1024") == true)
    }

    @Test("a non-SASL element while authenticating is unexpected")
    func unexpectedWhileAuthenticating() throws {
        var machine = try Self.machine()
        Self.driveToAuthenticating(&machine)
        #expect(
            Step(machine.elementReceived(Self.features(bind: true)))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("features"))
        )
    }

    // MARK: - XEP-0440 channel binding

    @Test("XEP-0440 tls-exporter advertised with -PLUS: SCRAM-SHA-256-PLUS with p=tls-exporter")
    func channelBindingPlus() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: Self.exporter)
        let offered = Self.features(
            mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256", "SCRAM-SHA-1", "PLAIN"],
            channelBindingTypes: ["tls-server-end-point", "tls-exporter"]
        )
        let auth = try #require(Self.sent(machine.elementReceived(offered)))
        #expect(auth[attribute: "mechanism"] == "SCRAM-SHA-256-PLUS")
        #expect(Self.decoded(auth.text) == "p=tls-exporter,,n=user,r=rOprNGfwEbeRWgbNEkqO")

        // The client-final-message binds the exporter bytes: c = base64(gs2-header + data).
        let response = try #require(Self.sent(machine.elementReceived(Self.challenge(Self.serverFirst))))
        let binding = Data(Array("p=tls-exporter,,".utf8) + Self.exporter).base64EncodedString()
        let clientFinal = try #require(Self.decoded(response.text))
        #expect(clientFinal.hasPrefix("c=\(binding),r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p="))
    }

    @Test("Direct TLS passes the channel binding of connected(channelBinding:)")
    func channelBindingDirectTLS() throws {
        var machine = try Self.machine(tlsMode: .directTLS)
        _ = machine.connected(channelBinding: Self.exporter)
        _ = machine.streamOpened(attributes: Self.header)
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: ["tls-exporter"])
        #expect(
            Step(machine.elementReceived(offered))
                == .sending(Self.auth("SCRAM-SHA-256-PLUS", "p=tls-exporter,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
        )
    }

    @Test("-PLUS offered but tls-exporter not advertised (XEP-0440): SCRAM-SHA-256 with 'n,,'", arguments: [
        nil, ["tls-server-end-point"], [String](),
    ] as [[String]?])
    func channelBindingNotAdvertised(types: [String]?) throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: Self.exporter)
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: types)
        #expect(Step(machine.elementReceived(offered)) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
    }

    @Test("tls-exporter advertised without -PLUS: SCRAM-SHA-256 with 'y,,' (RFC 5802 §6)")
    func channelBindingWithoutPlus() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: Self.exporter)
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256"], channelBindingTypes: ["tls-exporter"])
        #expect(
            Step(machine.elementReceived(offered))
                == .sending(Self.auth("SCRAM-SHA-256", "y,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
        )
    }

    @Test("-PLUS advertised but no exporter bytes from TLS: SCRAM-SHA-256")
    func channelBindingUnavailable() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: nil)
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: ["tls-exporter"])
        #expect(Step(machine.elementReceived(offered)) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
    }

    // MARK: - Stream-level errors

    /// Points in the negotiation reachable before `ready`.
    enum Point: String, CaseIterable, CustomTestStringConvertible {
        case awaitingHeader, awaitingFeatures, awaitingProceed, tlsHandshaking, awaitingSecuredHeader
        case awaitingSecuredFeatures, authenticating, awaitingAuthenticatedHeader, awaitingBindFeatures
        case binding, establishingSession

        var testDescription: String { self.rawValue }

        var expectedState: String {
            switch self {
            case .awaitingHeader: "awaitingStreamHeader(plaintext)"
            case .awaitingFeatures: "awaitingFeatures(plaintext)"
            case .awaitingProceed: "awaitingProceed"
            case .tlsHandshaking: "tlsHandshaking"
            case .awaitingSecuredHeader: "awaitingStreamHeader(secured)"
            case .awaitingSecuredFeatures: "awaitingFeatures(secured)"
            case .authenticating: "authenticating(SCRAM-SHA-256)"
            case .awaitingAuthenticatedHeader: "awaitingStreamHeader(authenticated)"
            case .awaitingBindFeatures: "awaitingFeatures(authenticated)"
            case .binding: "binding(t-1)"
            case .establishingSession: "establishingSession(t-2, user@example.com/abc)"
            }
        }
    }

    static func machine(at point: Point, sourceLocation: SourceLocation = #_sourceLocation) throws -> Machine {
        var machine = try Self.machine()
        let sessionFeatures = Self.features(bind: true, session: .required)
        switch point {
        case .awaitingHeader:
            _ = machine.connected()
        case .awaitingFeatures:
            _ = machine.connected()
            _ = machine.streamOpened(attributes: header)
        case .awaitingProceed:
            _ = machine.connected()
            _ = machine.streamOpened(attributes: header)
            _ = machine.elementReceived(features(startTLS: true, mechanisms: allMechanisms))
        case .tlsHandshaking:
            _ = machine.connected()
            _ = machine.streamOpened(attributes: header)
            _ = machine.elementReceived(features(startTLS: true, mechanisms: allMechanisms))
            _ = machine.elementReceived(proceed)
        case .awaitingSecuredHeader:
            _ = machine.connected()
            _ = machine.streamOpened(attributes: header)
            _ = machine.elementReceived(features(startTLS: true, mechanisms: allMechanisms))
            _ = machine.elementReceived(proceed)
            _ = machine.tlsEstablished(channelBinding: nil)
        case .awaitingSecuredFeatures:
            driveToSecuredFeatures(&machine, sourceLocation: sourceLocation)
        case .authenticating:
            driveToAuthenticating(&machine, sourceLocation: sourceLocation)
        case .awaitingAuthenticatedHeader:
            driveToAuthenticating(&machine, sourceLocation: sourceLocation)
            _ = machine.elementReceived(challenge(serverFirst))
            _ = machine.elementReceived(success(serverFinal))
        case .awaitingBindFeatures:
            driveToAuthenticatedFeatures(&machine, sourceLocation: sourceLocation)
        case .binding:
            driveToBinding(&machine, finalFeatures: sessionFeatures, sourceLocation: sourceLocation)
        case .establishingSession:
            driveToBinding(&machine, finalFeatures: sessionFeatures, sourceLocation: sourceLocation)
            _ = machine.elementReceived(bindResult("t-1", jid: "user@example.com/abc"))
        }
        #expect(summary(machine.state) == point.expectedState, sourceLocation: sourceLocation)
        return machine
    }

    static func readyMachine() throws -> Machine {
        var machine = try Self.machine()
        driveToBinding(&machine)
        _ = machine.elementReceived(bindResult("t-1", jid: "user@example.com/abc"))
        #expect(summary(machine.state) == "ready(user@example.com/abc)")
        return machine
    }

    @Test("<stream:error/> at any point closes with the server's condition and text", arguments: Point.allCases)
    func streamErrorAnywhere(point: Point) throws {
        var machine = try Self.machine(at: point)
        let error = Self.streamError("host-unknown", text: "x")
        let expected = XMPPClientError.streamError(condition: .hostUnknown, text: "x")
        #expect(Step(machine.elementReceived(error)) == .close(expected))
        #expect(Self.failure(of: machine.state) == expected)
    }

    @Test("<stream:error/> after ready also closes")
    func streamErrorWhenReady() throws {
        var machine = try Self.readyMachine()
        #expect(
            Step(machine.elementReceived(Self.streamError("system-shutdown")))
                == .close(.streamError(condition: .systemShutdown, text: nil))
        )
    }

    @Test("<stream:error/> condition parsing: text first, unknown condition, foreign children")
    func streamErrorParsing() throws {
        let textFirst = Self.element(
            "error", XMPPNamespace.stream,
            children: [
                Self.element("text", XMPPNamespace.streamErrors, text: "later"),
                Self.element("app-specific", "urn:example:app"),
                Self.element("see-other-host", XMPPNamespace.streamErrors, text: "other.example.com"),
            ]
        )
        #expect(Machine.streamError(from: textFirst) == .streamError(condition: .seeOtherHost, text: "later"))
        #expect(
            Machine.streamError(from: Self.streamError("x-new-condition"))
                == .streamError(condition: .undefinedCondition, text: nil)
        )
        // An <error/> outside the streams namespace is not a stream error.
        var machine = try Self.machine(at: .awaitingFeatures)
        #expect(
            Step(machine.elementReceived(Self.element("error", XMPPNamespace.client)))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("error"))
        )
    }

    @Test("stream version below 1.0 or missing: unsupported-version", arguments: [
        [XMLAttribute(name: "version", value: "0.9")],
        [],
        [XMLAttribute(name: "from", value: "example.com")],
    ])
    func unsupportedVersion(attributes: [XMLAttribute]) throws {
        var machine = try Self.machine()
        _ = machine.connected()
        #expect(
            Step(machine.streamOpened(attributes: attributes))
                == .closeWithStreamError(.unsupportedVersion, .unexpectedElement("stream version 0.9"))
        )
        #expect(Self.failure(of: machine.state) == .unexpectedElement("stream version 0.9"))
    }

    @Test("unparseable stream versions are refused", arguments: ["", "abc", "0.0", "-1.0", "one.zero"])
    func unparseableVersion(version: String) throws {
        var machine = try Self.machine()
        _ = machine.connected()
        #expect(
            Step(machine.streamOpened(attributes: [XMLAttribute(name: "version", value: version)]))
                == .closeWithStreamError(.unsupportedVersion, .unexpectedElement("stream version \(version)"))
        )
    }

    @Test("stream versions 1.x (and a higher major) are accepted", arguments: ["1.0", "1.1", "1", "2.0"])
    func acceptedVersion(version: String) throws {
        var machine = try Self.machine()
        _ = machine.connected()
        #expect(Step(machine.streamOpened(attributes: [XMLAttribute(name: "version", value: version)])) == .none)
        #expect(Self.summary(machine.state) == "awaitingFeatures(plaintext)")
    }

    @Test("the version is checked again on the restarted stream")
    func unsupportedVersionAfterRestart() throws {
        var machine = try Self.machine(at: .awaitingSecuredHeader)
        #expect(
            Step(machine.streamOpened(attributes: [XMLAttribute(name: "version", value: "0.9")]))
                == .closeWithStreamError(.unsupportedVersion, .unexpectedElement("stream version 0.9"))
        )
    }

    @Test("decoding failures send the decoder's stream error", arguments: [Point.awaitingFeatures, .authenticating, .binding])
    func decodingFailed(point: Point) throws {
        var machine = try Self.machine(at: point)
        let error = XMLStreamError(.restrictedXML, "x")
        #expect(Step(machine.decodingFailed(error)) == .closeWithStreamError(.restrictedXML, .invalidServerXML(error)))
        #expect(Self.failure(of: machine.state) == .invalidServerXML(error))
    }

    @Test("timing out before ready sends connection-timeout", arguments: Point.allCases)
    func timedOutBeforeReady(point: Point) throws {
        var machine = try Self.machine(at: point)
        #expect(
            Step(machine.timedOut()) == .closeWithStreamError(.connectionTimeout, .timedOut("stream negotiation"))
        )
        #expect(Self.failure(of: machine.state) == .timedOut("stream negotiation"))
        // Once failed, a second deadline does nothing.
        #expect(Step(machine.timedOut()) == .none)
    }

    @Test("timing out before connecting also closes")
    func timedOutInitial() throws {
        var machine = try Self.machine()
        #expect(Step(machine.timedOut()) == .closeWithStreamError(.connectionTimeout, .timedOut("stream negotiation")))
    }

    @Test("timing out after ready does nothing")
    func timedOutAfterReady() throws {
        var machine = try Self.readyMachine()
        #expect(Step(machine.timedOut()) == .none)
        #expect(Self.summary(machine.state) == "ready(user@example.com/abc)")
    }

    @Test("the server closing before ready is closedByServer", arguments: Point.allCases)
    func streamClosedBeforeReady(point: Point) throws {
        var machine = try Self.machine(at: point)
        #expect(Step(machine.streamClosed()) == .close(.closedByServer))
        #expect(Self.failure(of: machine.state) == .closedByServer)
    }

    @Test("the server closing after ready needs no action")
    func streamClosedAfterReady() throws {
        var machine = try Self.readyMachine()
        #expect(Step(machine.streamClosed()) == .none)
    }

    @Test("unexpected elements close with unsupported-stanza-type", arguments: [
        (Point.awaitingFeatures, "message", XMPPNamespace.client),
        (.awaitingFeatures, "features", "urn:example:not-streams"),
        (.awaitingSecuredFeatures, "presence", XMPPNamespace.client),
        (.awaitingProceed, "proceed", XMPPNamespace.sasl),
        (.tlsHandshaking, "proceed", XMPPNamespace.tls),
        (.awaitingHeader, "features", XMPPNamespace.stream),
        (.awaitingBindFeatures, "message", XMPPNamespace.client),
        (.binding, "message", XMPPNamespace.client),
        (.establishingSession, "presence", XMPPNamespace.client),
    ])
    func unexpectedElement(point: Point, name: String, namespace: String) throws {
        var machine = try Self.machine(at: point)
        #expect(
            Step(machine.elementReceived(Self.element(name, namespace)))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement(name))
        )
        #expect(Self.failure(of: machine.state) == .unexpectedElement(name))
        // After the failure further surprises are ignored.
        #expect(Step(machine.elementReceived(Self.element("message", XMPPNamespace.client))) == .none)
    }

    @Test("events out of order are unexpected")
    func eventsOutOfOrder() throws {
        var twice = try Self.machine()
        _ = twice.connected()
        #expect(Step(twice.connected()) == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("connected twice")))

        var early = try Self.machine(at: .awaitingFeatures)
        #expect(
            Step(early.tlsEstablished(channelBinding: nil))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("TLS handshake"))
        )

        var header = try Self.machine(at: .awaitingFeatures)
        #expect(
            Step(header.streamOpened(attributes: Self.header))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("stream header"))
        )
    }

    // MARK: - Binding

    @Test("a bind error IQ fails with its condition and text")
    func bindError() throws {
        var machine = try Self.machine(at: .binding)
        #expect(
            Step(machine.elementReceived(Self.iqError("t-1", condition: "conflict")))
                == .close(.bindFailed(condition: "conflict", text: nil))
        )

        var withText = try Self.machine(at: .binding)
        #expect(
            Step(withText.elementReceived(Self.iqError("t-1", condition: "not-allowed", text: "too many resources")))
                == .close(.bindFailed(condition: "not-allowed", text: "too many resources"))
        )

        var noCondition = try Self.machine(at: .binding)
        #expect(
            Step(noCondition.elementReceived(Self.iq("error", "t-1")))
                == .close(.bindFailed(condition: "undefined-condition", text: nil))
        )
    }

    @Test("a bind result without a valid full JID fails", arguments: [
        "user@example.com", "example.com", "", "user@example.com/", "@example.com/abc", "user@exa mple.com/abc", nil,
    ] as [String?])
    func bindResultBadJID(jid: String?) throws {
        var machine = try Self.machine(at: .binding)
        #expect(
            Step(machine.elementReceived(Self.bindResult("t-1", jid: jid)))
                == .close(.bindFailed(condition: "bad-jid", text: "server returned no valid full JID"))
        )
    }

    @Test("a result with another id, or a non-result type, is not the bind answer")
    func bindResultOtherID() throws {
        var machine = try Self.machine(at: .binding)
        #expect(
            Step(machine.elementReceived(Self.bindResult("t-9", jid: "user@example.com/abc")))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("iq"))
        )
        var set = try Self.machine(at: .binding)
        #expect(
            Step(set.elementReceived(Self.iq("set", "t-1")))
                == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("iq"))
        )
    }

    @Test("no <bind/> offered after authentication fails")
    func bindNotOffered() throws {
        var machine = try Self.machine(at: .awaitingBindFeatures)
        #expect(
            Step(machine.elementReceived(Self.features(session: .required)))
                == .close(.bindFailed(condition: "not-offered", text: nil))
        )
    }

    // MARK: - Secrets

    enum SecretPoint: String, CaseIterable, CustomTestStringConvertible {
        case initial, scramAfterChallenge, plain, ready, failed
        var testDescription: String { self.rawValue }
    }

    @Test("description and dump never contain the password", arguments: SecretPoint.allCases)
    func passwordNotInDescriptions(point: SecretPoint) throws {
        let secret = "Hunter2-Sekrit"
        var machine = try Self.machine(password: secret)
        switch point {
        case .initial:
            break
        case .scramAfterChallenge:
            _ = machine.connected(channelBinding: nil)
            _ = machine.streamOpened(attributes: Self.header)
            _ = machine.elementReceived(Self.features(startTLS: true, mechanisms: Self.allMechanisms))
            _ = machine.elementReceived(Self.proceed)
            _ = machine.tlsEstablished(channelBinding: nil)
            _ = machine.streamOpened(attributes: Self.header)
            _ = machine.elementReceived(Self.features(mechanisms: Self.allMechanisms))
            _ = try #require(Self.sent(machine.elementReceived(Self.challenge(Self.serverFirst))))
            #expect(Self.summary(machine.state) == "authenticating(SCRAM-SHA-256)")
        case .plain:
            var direct = try Self.machine(tlsMode: .directTLS, password: secret)
            _ = direct.connected()
            _ = direct.streamOpened(attributes: Self.header)
            _ = try #require(Self.sent(direct.elementReceived(Self.features(mechanisms: ["PLAIN"]))))
            #expect(Self.summary(direct.state) == "authenticating(PLAIN)")
            machine = direct
        case .ready:
            var direct = try Self.machine(tlsMode: .directTLS, password: secret)
            _ = direct.connected()
            _ = direct.streamOpened(attributes: Self.header)
            _ = direct.elementReceived(Self.features(mechanisms: ["PLAIN"]))
            _ = direct.elementReceived(Self.success(nil))
            _ = direct.streamOpened(attributes: Self.header)
            _ = direct.elementReceived(Self.features(bind: true))
            _ = direct.elementReceived(Self.bindResult("t-1", jid: "user@example.com/abc"))
            #expect(Self.summary(direct.state) == "ready(user@example.com/abc)")
            machine = direct
        case .failed:
            Self.driveToAuthenticating(&machine)
            _ = machine.elementReceived(Self.element("failure", XMPPNamespace.sasl))
            #expect(Self.summary(machine.state).hasPrefix("failed("))
        }

        let description = String(describing: machine)
        let debug = String(reflecting: machine)
        var dumped = ""
        dump(machine, to: &dumped)
        for text in [description, debug, dumped] {
            #expect(!text.contains(secret))
            #expect(!text.contains("Hunter2"))
            #expect(!text.contains(Data(secret.utf8).base64EncodedString()))
            #expect(text.contains("state"))
        }
    }
}

/// Sorts attributes recursively so equality ignores attribute order.
private func normalized(_ element: XMLElement) -> XMLElement {
    XMLElement(
        name: element.name,
        namespace: element.namespace,
        attributes: element.attributes.sorted { $0.name < $1.name },
        children: element.children.map {
            switch $0 {
            case .element(let child): .element(normalized(child))
            case .text(let text): .text(text)
            }
        }
    )
}

extension StreamNegotiationStateMachineTests.Step: CustomTestStringConvertible {
    var testDescription: String {
        switch self {
        case .none: ".none"
        case .sendStreamHeader: ".sendStreamHeader"
        case .send(let element): ".send(\(render(element)))"
        case .startTLS: ".startTLS"
        case .restartStream: ".restartStream"
        case .ready(let jid, _): ".ready(\(jid))"
        case .closeWithStreamError(let condition, let error): ".closeWithStreamError(\(condition.rawValue), \(error))"
        case .close(let error): ".close(\(error))"
        }
    }
}

/// A compact XML-ish rendering for failure messages.
private func render(_ element: XMLElement) -> String {
    let attributes = element.attributes.map { " \($0.name)='\($0.value)'" }.joined()
    let children = element.children.map {
        switch $0 {
        case .element(let child): render(child)
        case .text(let text): text
        }
    }.joined()
    return "<\(element.name) xmlns='\(element.namespace)'\(attributes)>\(children)</\(element.name)>"
}
