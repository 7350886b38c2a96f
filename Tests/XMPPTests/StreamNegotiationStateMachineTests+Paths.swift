import Foundation
import Testing

@testable import XMPP

extension StreamNegotiationStateMachineTests {
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
        #expect(Step(machine.tlsEstablished(channelBinding: .none)) == .restartStream)
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
        #expect(Step(machine.connected(channelBinding: .none)) == .sendStreamHeader)
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
        _ = machine.connected(channelBinding: ChannelBindingData(exporter: Self.exporter))
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
        Self.driveToSecuredFeatures(&machine, channelBinding: ChannelBindingData(exporter: Self.exporter))
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
        _ = machine.connected(channelBinding: ChannelBindingData(exporter: Self.exporter))
        _ = machine.streamOpened(attributes: Self.header)
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: ["tls-exporter"])
        #expect(
            Step(machine.elementReceived(offered))
                == .sending(Self.auth("SCRAM-SHA-256-PLUS", "p=tls-exporter,,n=user,r=rOprNGfwEbeRWgbNEkqO"))
        )
    }

    /// A server of RFC 6120's SASL from before XEP-0440 offers -PLUS and names no type:
    /// on TLS 1.3 that is tls-exporter (RFC 9266 §3). An empty announcement names none.
    @Test("-PLUS offered with no XEP-0440 types: bound with tls-exporter", arguments: [nil, [String]()] as [[String]?])
    func channelBindingNotAdvertised(types: [String]?) throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: ChannelBindingData(exporter: Self.exporter))
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: types)
        guard let auth = Self.sent(machine.elementReceived(offered)) else { return }
        #expect(auth[attribute: "mechanism"] == "SCRAM-SHA-256-PLUS")
        #expect(Self.decoded(auth.text)?.hasPrefix("p=tls-exporter,,n=user,") == true)
    }

    /// XEP-0440 §3 rule 6 as XEP-0474 §4 relaxes it: only types we cannot bind with are
    /// announced; `n`, and the server must prove with `h` that it offered no more.
    @Test("only unusable types announced: 'n,,', and the server-first-message must carry a matching h")
    func channelBindingOnlyUnusableTypes() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: ChannelBindingData(exporter: Self.exporter))
        let mechanisms = ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"]
        let offered = Self.features(mechanisms: mechanisms, channelBindingTypes: ["tls-unique"])
        #expect(Step(machine.elementReceived(offered)) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
        var withoutHash = machine
        guard case .close(.authenticationFailed(_, .downgradeProtectionMissing)) = withoutHash.elementReceived(Self.challenge(Self.serverFirst)) else {
            Issue.record("a server-first-message without h was taken: \(Self.summary(withoutHash.state))")
            return
        }
        let hash = DowngradeProtection(mechanisms: mechanisms, channelBindingTypes: ["tls-unique"]).expectedHash(.sha256)
        let withHash = Self.serverFirst + ",h=" + Data(hash).base64EncodedString()
        guard let response = Self.sent(machine.elementReceived(Self.challenge(withHash))) else { return }
        #expect(Self.decoded(response.text)?.hasPrefix("c=biws,r=") == true)
        guard case .authenticating(let sasl) = machine.state else { return }
        #expect(sasl.downgradeProtected)
    }

    /// XEP-0474 §3: a hash over other lists than those received means something removed
    /// an offer on the way; no proof is sent.
    @Test("an h that does not match the lists received ends the login before any proof")
    func downgradeDetected() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine)
        #expect(Step(machine.elementReceived(Self.features(mechanisms: ["SCRAM-SHA-256"]))) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
        let hash = DowngradeProtection(mechanisms: ["SCRAM-SHA-256", "SCRAM-SHA-256-PLUS"], channelBindingTypes: ["tls-exporter"]).expectedHash(.sha256)
        guard case .close(.authenticationFailed(_, .downgradeDetected)) = machine.elementReceived(Self.challenge(Self.serverFirst + ",h=" + Data(hash).base64EncodedString())) else {
            Issue.record("a mismatching h was taken: \(Self.summary(machine.state))")
            return
        }
    }

    /// XEP-0440 §3 rule 5: types announced and no -PLUS to bind with is what a man in the
    /// middle who removed the -PLUS mechanisms leaves: refused, never `y`.
    @Test("tls-exporter announced without a -PLUS mechanism: refused as a downgrade")
    func channelBindingWithoutPlus() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: ChannelBindingData(exporter: Self.exporter))
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256"], channelBindingTypes: ["tls-exporter"])
        guard case .close(.authenticationFailed(_, .channelBindingInconsistent)) = machine.elementReceived(offered) else {
            Issue.record("types without -PLUS were taken: \(Self.summary(machine.state))")
            return
        }
    }

    @Test("neither -PLUS nor types, but we could bind: 'y,,' (RFC 5802 §6)")
    func channelBindingNotSupportedByServer() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: ChannelBindingData(exporter: Self.exporter))
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256"])
        #expect(Step(machine.elementReceived(offered)) == .sending(Self.auth("SCRAM-SHA-256", "y,,n=user,r=rOprNGfwEbeRWgbNEkqO")))
    }

    @Test("tls-server-end-point where the exporter is not announced: SCRAM-SHA-256-PLUS bound to the certificate")
    func channelBindingServerEndPoint() throws {
        var machine = try Self.machine()
        let endPoint = [UInt8](repeating: 0xE9, count: 32)
        Self.driveToSecuredFeatures(&machine, channelBinding: ChannelBindingData(exporter: Self.exporter, serverEndPoint: endPoint))
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: ["tls-server-end-point"])
        guard let auth = Self.sent(machine.elementReceived(offered)) else { return }
        #expect(auth[attribute: "mechanism"] == "SCRAM-SHA-256-PLUS")
        #expect(Self.decoded(auth.text) == "p=tls-server-end-point,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        guard let response = Self.sent(machine.elementReceived(Self.challenge(Self.serverFirst))) else { return }
        let binding = Data(Array("p=tls-server-end-point,,".utf8) + endPoint).base64EncodedString()
        #expect(Self.decoded(response.text)?.hasPrefix("c=\(binding),") == true)
    }

    @Test("-PLUS advertised but no exporter bytes from TLS: SCRAM-SHA-256")
    func channelBindingUnavailable() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine, channelBinding: .none)
        let offered = Self.features(mechanisms: ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"], channelBindingTypes: ["tls-exporter"])
        #expect(Step(machine.elementReceived(offered)) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
    }

}
