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
        password: String = password,
        resume: Machine.ResumeRequest? = nil
    ) throws -> Machine {
        Machine(
            configuration: .init(jid: try JID(jid), tlsMode: tlsMode, sasl: sasl, resume: resume),
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
        case emit(XMLElement)
        case sendStreamClose
        case finish
        case registered

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
            case .emit(let element): self = .emit(element)
            case .sendStreamClose: self = .sendStreamClose
            case .finish: self = .finish
            case .registered: self = .registered
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
        case .authenticating2(let sasl2): "authenticating2(\(sasl2.mechanism ?? "-"))"
        case .awaitingBoundFeatures(let jid): "awaitingBoundFeatures(\(jid))"
        case .binding(let id): "binding(\(id))"
        case .resuming(let request): "resuming(\(request.previousID), h: \(request.handled))"
        case .establishingSession(let id, let jid): "establishingSession(\(id), \(jid))"
        case .ready(let jid): "ready(\(jid))"
        case .closing: "closing"
        case .registering(let id, let submitted): "registering(\(id), submitted: \(submitted))"
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
        channelBinding: ChannelBindingData = .none,
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
        #expect(machine.derivesKey(challenge(serverFirst)), "SCRAM's server-first-message: PBKDF2, off the loop", sourceLocation: sourceLocation)
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

}

/// Sorts attributes recursively so equality ignores attribute order.
func normalized(_ element: XMLElement) -> XMLElement {
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
        case .emit(let element): ".emit(\(render(element)))"
        case .sendStreamClose: ".sendStreamClose"
        case .finish: ".finish"
        case .registered: ".registered"
        }
    }
}

/// A compact XML-ish rendering for failure messages.
func render(_ element: XMLElement) -> String {
    let attributes = element.attributes.map { " \($0.name)='\($0.value)'" }.joined()
    let children = element.children.map {
        switch $0 {
        case .element(let child): render(child)
        case .text(let text): text
        }
    }.joined()
    return "<\(element.name) xmlns='\(element.namespace)'\(attributes)>\(children)</\(element.name)>"
}
