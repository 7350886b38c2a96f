import Foundation
import Testing

@testable import XMPP

extension StreamNegotiationStateMachineTests {
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
            _ = machine.tlsEstablished(channelBinding: .none)
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

    @Test("the server ending an established stream itself (</stream:stream>) is streamClosedByServer; before ready it is closedByServer", arguments: Point.allCases)
    func streamEndReceived(point: Point) throws {
        var ready = try Self.readyMachine()
        #expect(Step(ready.streamEndReceived()) == .close(.streamClosedByServer))
        #expect(Step(ready.streamClosed()) == .none, "the connection closing after it adds nothing")
        var early = try Self.machine(at: point)
        #expect(Step(early.streamEndReceived()) == .close(.closedByServer))
    }

    @Test("whether the server ended the stream itself and stays up: its </stream:stream> and the stream errors of a running server do; a cut connection, system-shutdown, reset and vaguer conditions do not")
    func serverEndedStream() {
        #expect(XMPPClientError.streamClosedByServer.serverEndedStream)
        #expect(XMPPClientError.streamError(condition: .policyViolation, text: "has been kicked").serverEndedStream)
        #expect(XMPPClientError.streamError(condition: .conflict, text: nil).serverEndedStream)
        #expect(!XMPPClientError.streamError(condition: .systemShutdown, text: nil).serverEndedStream)
        #expect(!XMPPClientError.streamError(condition: .reset, text: nil).serverEndedStream)
        #expect(!XMPPClientError.streamError(condition: .internalServerError, text: nil).serverEndedStream, "a condition that says too little is not trusted")
        #expect(!XMPPClientError.closedByServer.serverEndedStream)
        #expect(!XMPPClientError.invalidServerXML(XMLStreamError(.notWellFormed, "x")).serverEndedStream)
    }

    @Test("the server closing after ready is reported as closedByServer")
    func streamClosedAfterReady() throws {
        var machine = try Self.readyMachine()
        #expect(Step(machine.streamClosed()) == .close(.closedByServer))
        #expect(Step(machine.streamClosed()) == .none)
    }

    @Test("after ready, stanzas are emitted and a stream error closes")
    func emitAfterReady() throws {
        var machine = try Self.readyMachine()
        let message = Self.element("message", XMPPNamespace.client, text: "hi")
        #expect(Step(machine.elementReceived(message)) == .emit(message))
        #expect(Step(machine.elementReceived(Self.streamError("conflict", text: nil))) == .close(.streamError(condition: .conflict, text: nil)))
    }

    @Test("a clean close: we send </stream:stream>, the server answers, the connection closes")
    func cleanClose() throws {
        var machine = try Self.readyMachine()
        #expect(Step(machine.closeRequested()) == .sendStreamClose)
        #expect(Step(machine.closeRequested()) == .none)
        // Stanzas still in flight are emitted while closing.
        let message = Self.element("message", XMPPNamespace.client)
        #expect(Step(machine.elementReceived(message)) == .emit(message))
        #expect(Step(machine.streamClosed()) == .finish)
        #expect(Step(machine.timedOut()) == .none)
    }

    @Test("plaintext after <proceed/> fails before TLS starts")
    func dataAfterProceed() throws {
        var machine = try Self.machine(at: .awaitingProceed)
        #expect(Step(machine.elementReceived(Self.proceed, dataFollows: true)) == .close(.tls(TLSError(.unencryptedDataAfterProceed))))
    }

    @Test("data after <success/> and before the restart is bad-format")
    func dataAfterSuccess() throws {
        var machine = try Self.machine(at: .authenticating)
        _ = machine.elementReceived(Self.challenge(Self.serverFirst))
        let step = Step(machine.elementReceived(Self.success(Self.serverFinal), dataFollows: true))
        guard case .closeWithStreamError(.badFormat, _) = step else {
            Issue.record("expected bad-format, got \(step)")
            return
        }
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
            Step(early.tlsEstablished(channelBinding: .none))
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

    @Test("a bind result without a valid full JID of this account fails", arguments: [
        "user@example.com", "example.com", "", "user@example.com/", "@example.com/abc", "user@exa mple.com/abc", nil,
        "mallory@example.com/abc", "user@other.example/abc",
    ] as [String?])
    func bindResultBadJID(jid: String?) throws {
        var machine = try Self.machine(at: .binding)
        #expect(
            Step(machine.elementReceived(Self.bindResult("t-1", jid: jid)))
                == .close(.bindFailed(condition: "bad-jid", text: "server returned no valid full JID of this account"))
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
            _ = machine.connected(channelBinding: .none)
            _ = machine.streamOpened(attributes: Self.header)
            _ = machine.elementReceived(Self.features(startTLS: true, mechanisms: Self.allMechanisms))
            _ = machine.elementReceived(Self.proceed)
            _ = machine.tlsEstablished(channelBinding: .none)
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
