import Foundation
import Testing

@testable import XMPP

/// The SASL2 path of the negotiation (XEP-0388, XEP-0386, XEP-0198 inline, XEP-0484), from
/// the server's elements as parsed off the wire, with the RFC 7677 SCRAM vector.
extension StreamNegotiationStateMachineTests {
    static let userAgentID = "d4565fa7-4d72-4749-b3d3-740edbf87770"
    static let fullJID = "user@example.com/xmpp-bridge~AbCdEfGhIjKl"

    static func sasl2Machine(bindTag: String? = "xmpp-bridge", token: FASTToken? = nil, resume: Machine.ResumeRequest? = nil) throws -> Machine {
        let login = SASL2Login(
            userAgent: .init(id: userAgentID, software: "xmpp-bridge"), bindTag: bindTag, token: token, requestsToken: true
        )
        return Machine(
            configuration: .init(jid: try JID(account), tlsMode: .startTLS, sasl: SASLConfiguration(), resume: resume, sasl2: login),
            password: password, clientNonce: nonce, ids: StanzaIDGenerator(prefix: "t")
        )
    }

    static func sasl2Features(bind: Bool = true, inlineSM: Bool = true, fast: Bool = true) throws -> XMLElement {
        let bindXML = bind ? "<bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:carbons:2'/><feature var='urn:xmpp:sm:3'/></inline></bind>" : ""
        let smXML = inlineSM ? "<sm xmlns='urn:xmpp:sm:3'/>" : ""
        let fastXML = fast ? "<fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-NONE</mechanism></fast>" : ""
        return try parsedElement(
            """
            <stream:features><authentication xmlns='urn:xmpp:sasl:2'><mechanism>SCRAM-SHA-256</mechanism>\
            <inline>\(bindXML)\(smXML)\(fastXML)</inline></authentication>\
            <mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-256</mechanism></mechanisms></stream:features>
            """
        )
    }

    static func sasl2(_ xml: String) throws -> XMLElement { try parsedElement(xml) }

    static func sasl2Success(_ inner: String, data: String? = serverFinal) throws -> XMLElement {
        let additional = data.map { "<additional-data>\(base64($0))</additional-data>" } ?? ""
        return try parsedElement("<success xmlns='urn:xmpp:sasl:2'>\(additional)\(inner)</success>")
    }

    /// Secured features → `<authenticate>` → challenge → response: awaiting `<success>`.
    static func driveSASL2ToSuccess(_ machine: inout Machine, features: XMLElement, sourceLocation: SourceLocation = #_sourceLocation) throws -> XMLElement? {
        Self.driveToSecuredFeatures(&machine, sourceLocation: sourceLocation)
        guard let authenticate = Self.sent(machine.elementReceived(features), sourceLocation: sourceLocation) else { return nil }
        #expect(authenticate.name == "authenticate" && authenticate.namespace == XMPPNamespace.sasl2, sourceLocation: sourceLocation)
        let challenge = try parsedElement("<challenge xmlns='urn:xmpp:sasl:2'>\(base64(serverFirst))</challenge>")
        #expect(machine.derivesKey(challenge), "SCRAM's server-first-message: PBKDF2, off the loop", sourceLocation: sourceLocation)
        #expect(!machine.derivesKey(try parsedElement("<challenge xmlns='\(XMPPNamespace.sasl)'>eA==</challenge>")), "another profile's", sourceLocation: sourceLocation)
        guard let response = Self.sent(machine.elementReceived(challenge), sourceLocation: sourceLocation) else { return nil }
        #expect(response.name == "response" && response.namespace == XMPPNamespace.sasl2, sourceLocation: sourceLocation)
        #expect(decoded(response.text) == clientFinal, sourceLocation: sourceLocation)
        return authenticate
    }

    @Test("the stream header names the account once secured, never on the plaintext stream nor for registration")
    func streamHeaderFrom() throws {
        var machine = try Self.machine()
        guard case .sendStreamHeader(nil) = machine.connected() else {
            Issue.record("the plaintext header names someone")
            return
        }
        _ = machine.streamOpened(attributes: Self.header)
        _ = machine.elementReceived(Self.features(startTLS: true))
        _ = machine.elementReceived(Self.proceed)
        guard case .restartStream(let from) = machine.tlsEstablished(channelBinding: .none) else {
            Issue.record("no restart after TLS")
            return
        }
        #expect(from?.description == "user@example.com")
        var direct = try Self.machine(tlsMode: .directTLS)
        guard case .sendStreamHeader(let directFrom) = direct.connected() else {
            Issue.record("Direct TLS sent no header")
            return
        }
        #expect(directFrom?.description == "user@example.com")
        // After RFC 6120's SASL, the restarted stream names the account too.
        _ = machine.streamOpened(attributes: Self.header)
        _ = machine.elementReceived(Self.features(mechanisms: ["PLAIN"]))
        guard case .restartStream(let authenticatedFrom) = machine.elementReceived(Self.success(nil)) else {
            Issue.record("no restart after SASL: \(Self.summary(machine.state))")
            return
        }
        #expect(authenticatedFrom?.description == "user@example.com")
        var registering = Machine(
            configuration: .init(jid: try JID(Self.account), tlsMode: .directTLS, sasl: SASLConfiguration(), purpose: .register),
            password: Self.password, clientNonce: Self.nonce, ids: StanzaIDGenerator(prefix: "t")
        )
        guard case .sendStreamHeader(nil) = registering.connected() else {
            Issue.record("a registration names the account it is creating")
            return
        }
    }

    @Test("SASL2 with Bind 2: one <authenticate> carries SCRAM, the user agent, the bind with SM and carbons, and a token request")
    func bind2Login() throws {
        var machine = try Self.sasl2Machine()
        let authenticate = try #require(try Self.driveSASL2ToSuccess(&machine, features: try Self.sasl2Features()))
        #expect(authenticate[attribute: "mechanism"] == "SCRAM-SHA-256")
        #expect(authenticate.firstChild(named: "initial-response", namespace: XMPPNamespace.sasl2).flatMap { Self.decoded($0.text) } == Self.clientFirst)
        #expect(authenticate.firstChild(named: "user-agent", namespace: XMPPNamespace.sasl2)?[attribute: "id"] == Self.userAgentID)
        let bind = try #require(authenticate.firstChild(named: "bind", namespace: XMPPNamespace.bind2))
        #expect(bind.firstChild(named: "tag", namespace: XMPPNamespace.bind2)?.text == "xmpp-bridge")
        #expect(Set(bind.elements.filter { $0.name == "enable" }.map(\.namespace)) == ["urn:xmpp:sm:3", "urn:xmpp:carbons:2"])
        #expect(authenticate.firstChild(named: "request-token", namespace: XMPPNamespace.fast)?[attribute: "mechanism"] == "HT-SHA-256-NONE")
        #expect(authenticate.firstChild(named: "resume", namespace: "urn:xmpp:sm:3") == nil)

        let success = try Self.sasl2Success(
            """
            <authorization-identifier>\(Self.fullJID)</authorization-identifier>\
            <bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='1' max='300'/></bound>\
            <token xmlns='urn:xmpp:fast:0' token='secret-token:fast-1' expiry='2026-12-21T10:00:00.000000Z'/>
            """
        )
        #expect(Step(machine.elementReceived(success)) == .none)
        #expect(Self.summary(machine.state) == "awaitingBoundFeatures(\(Self.fullJID))")
        let features = try parsedElement("<stream:features><csi xmlns='urn:xmpp:csi:0'/></stream:features>")
        #expect(Step(machine.elementReceived(features)) == .ready(try JID(Self.fullJID), StreamFeatures(features)))
        let login = machine.login
        #expect(login.profile == .sasl2 && login.mechanism == "SCRAM-SHA-256" && login.boundInline && login.carbonsEnabled)
        #expect(login.streamManagementAnswer?.name == "enabled" && login.streamManagementAnswer?[attribute: "id"] == "sm-1")
        #expect(login.newToken?.secret == "secret-token:fast-1" && login.newToken?.mechanism == HashedTokenMechanism.none)
        #expect(machine.authenticatedWith == .scramSHA256)
        #expect(!login.summary.contains("secret"), "the log line shows no token")
        // The header, <starttls/>, the secured header, <authenticate>, SCRAM's response.
        #expect(login.roundTrips == 5)
        #expect(!machine.derivesKey(try parsedElement("<challenge xmlns='urn:xmpp:sasl:2'>eA==</challenge>")), "not once ready")
    }

    @Test("inline resumption: <resumed/> in <success> is ready at once; the features Prosody sends after are no stanza")
    func inlineResumption() throws {
        let resume = Machine.ResumeRequest(previousID: "sm-0", handled: 17, jid: try JID(Self.fullJID))
        var machine = try Self.sasl2Machine(resume: resume)
        let authenticate = try #require(try Self.driveSASL2ToSuccess(&machine, features: try Self.sasl2Features()))
        let inline = try #require(authenticate.firstChild(named: "resume", namespace: "urn:xmpp:sm:3"))
        #expect(inline[attribute: "previd"] == "sm-0" && inline[attribute: "h"] == "17")
        let success = try Self.sasl2Success(
            "<authorization-identifier>\(Self.fullJID)</authorization-identifier><resumed xmlns='urn:xmpp:sm:3' previd='sm-0' h='5'/>"
        )
        guard case .ready(let jid, _) = machine.elementReceived(success) else {
            Issue.record("not ready at <success>: \(Self.summary(machine.state))")
            return
        }
        #expect(jid.description == Self.fullJID)
        #expect(machine.resumeAnswer?.name == "resumed")
        #expect(Step(machine.elementReceived(try parsedElement("<stream:features><csi xmlns='urn:xmpp:csi:0'/></stream:features>"))) == .none)
        let message = Self.element("message", XMPPNamespace.client, children: [Self.element("body", XMPPNamespace.client, text: "hi")])
        #expect(Step(machine.elementReceived(message)) == .emit(message))
    }

    @Test("a failed inline resumption without Bind 2: the features lead to RFC 6120's bind, and <resume/> is not sent again")
    func inlineResumptionFailed() throws {
        let resume = Machine.ResumeRequest(previousID: "sm-0", handled: 17, jid: try JID(Self.fullJID))
        var machine = try Self.sasl2Machine(bindTag: nil, resume: resume)
        _ = try #require(try Self.driveSASL2ToSuccess(&machine, features: try Self.sasl2Features()))
        let success = try Self.sasl2Success(
            """
            <authorization-identifier>user@example.com</authorization-identifier>\
            <failed xmlns='urn:xmpp:sm:3' h='3'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>
            """
        )
        #expect(Step(machine.elementReceived(success)) == .none)
        #expect(machine.resumeAnswer?.name == "failed")
        let features = try parsedElement(
            "<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/><sm xmlns='urn:xmpp:sm:3'/></stream:features>"
        )
        #expect(Step(machine.elementReceived(features)) == .sending(Self.bindRequest("t-1")))
    }

    @Test("Bind 2 that fails (Prosody) or is left out: RFC 6120's bind follows; <bound> without the SM answer asked for: enabled after")
    func bind2Fallbacks() throws {
        for inner in ["<failed xmlns='urn:xmpp:bind:0'><error xmlns='jabber:client' type='cancel'/></failed>", ""] {
            var machine = try Self.sasl2Machine()
            _ = try #require(try Self.driveSASL2ToSuccess(&machine, features: try Self.sasl2Features()))
            let success = try Self.sasl2Success("<authorization-identifier>user@example.com</authorization-identifier>\(inner)")
            #expect(Step(machine.elementReceived(success)) == .none)
            let features = try parsedElement("<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
            #expect(Step(machine.elementReceived(features)) == .sending(Self.bindRequest("t-1")))
            #expect(!machine.login.boundInline)
        }
        var machine = try Self.sasl2Machine()
        _ = try #require(try Self.driveSASL2ToSuccess(&machine, features: try Self.sasl2Features()))
        let success = try Self.sasl2Success("<authorization-identifier>\(Self.fullJID)</authorization-identifier><bound xmlns='urn:xmpp:bind:0'/>")
        #expect(Step(machine.elementReceived(success)) == .none)
        #expect(machine.login.boundInline && machine.login.streamManagementAnswer == nil)
        #expect(machine.warnings.contains { $0.contains("enabling it after") })
    }

    @Test("a <success> for another account, or a bound one with the bare JID, ends the login")
    func malformedSuccess() throws {
        for inner in [
            "<authorization-identifier>mallory@example.com/x</authorization-identifier><bound xmlns='urn:xmpp:bind:0'/>",
            "<authorization-identifier>user@example.com</authorization-identifier><bound xmlns='urn:xmpp:bind:0'/>",
            "",
        ] {
            var machine = try Self.sasl2Machine()
            _ = try #require(try Self.driveSASL2ToSuccess(&machine, features: try Self.sasl2Features()))
            guard case .close(.authenticationFailed(_, .malformedOutcome)) = machine.elementReceived(try Self.sasl2Success(inner)) else {
                Issue.record("taken: \(inner) → \(Self.summary(machine.state))")
                continue
            }
        }
        var forged = try Self.sasl2Machine()
        _ = try #require(try Self.driveSASL2ToSuccess(&forged, features: try Self.sasl2Features()))
        let wrongProof = try Self.sasl2Success("<authorization-identifier>user@example.com</authorization-identifier>", data: "v=AAAA")
        guard case .close(.authenticationFailed(_, .invalidServerSignature)) = forged.elementReceived(wrongProof) else {
            Issue.record("a wrong server proof was taken: \(Self.summary(forged.state))")
            return
        }
    }

    @Test("a FAST token logs in without SCRAM; refused, the password logs in on the same stream and asks for a new one")
    func fastToken() throws {
        let token = FASTToken(secret: "secret-token:fast-0", expiry: Date(timeIntervalSinceNow: 86_400), mechanism: .none)
        var machine = try Self.sasl2Machine(token: token)
        Self.driveToSecuredFeatures(&machine)
        let authenticate = try #require(Self.sent(machine.elementReceived(try Self.sasl2Features())))
        #expect(authenticate[attribute: "mechanism"] == "HT-SHA-256-NONE")
        #expect(authenticate.firstChild(named: "fast", namespace: XMPPNamespace.fast) != nil)
        #expect(authenticate.firstChild(named: "request-token", namespace: XMPPNamespace.fast) == nil)
        let initial = try #require(authenticate.firstChild(named: "initial-response", namespace: XMPPNamespace.sasl2))
        #expect(try SASL2Base64.decode(initial.text) == HashedTokenMechanism.initialResponse(username: "user", token: token.secret, channelBinding: []))

        var accepted = machine
        let responder = OpenSSLCrypto.hmac(.sha256, key: Array(token.secret.utf8), data: Array("Responder".utf8))
        let success = try parsedElement(
            """
            <success xmlns='urn:xmpp:sasl:2'><additional-data>\(Data(responder).base64EncodedString())</additional-data>\
            <authorization-identifier>\(Self.fullJID)</authorization-identifier><bound xmlns='urn:xmpp:bind:0'>\
            <enabled xmlns='urn:xmpp:sm:3' id='sm-2' resume='true'/></bound></success>
            """
        )
        #expect(Step(accepted.elementReceived(success)) == .none)
        #expect(accepted.login.usedToken && accepted.login.mechanism == "HT-SHA-256-NONE" && accepted.authenticatedWith == nil)

        let refused = try parsedElement("<failure xmlns='urn:xmpp:sasl:2'><credentials-expired/><text>expired</text></failure>")
        guard let retry = Self.sent(machine.elementReceived(refused)) else { return }
        #expect(retry[attribute: "mechanism"] == "SCRAM-SHA-256")
        #expect(retry.firstChild(named: "request-token", namespace: XMPPNamespace.fast)?[attribute: "mechanism"] == "HT-SHA-256-NONE")
        #expect(machine.login.tokenRefused)
    }

    @Test("without the SASL2 setting, or without TLS, an offered SASL2 is left for RFC 6120's SASL")
    func sasl2NotUsed() throws {
        var machine = try Self.machine()
        Self.driveToSecuredFeatures(&machine)
        #expect(Step(machine.elementReceived(try Self.sasl2Features())) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
        let login = SASL2Login(userAgent: .init(id: Self.userAgentID), bindTag: "xmpp-bridge")
        var plaintext = Machine(
            configuration: .init(jid: try JID(Self.account), tlsMode: .plaintextOnLoopback, sasl: SASLConfiguration(), sasl2: login),
            password: Self.password, clientNonce: Self.nonce, ids: StanzaIDGenerator(prefix: "t")
        )
        _ = plaintext.connected()
        _ = plaintext.streamOpened(attributes: Self.header)
        #expect(Step(plaintext.elementReceived(try Self.sasl2Features())) == .sending(Self.auth("SCRAM-SHA-256", Self.clientFirst)))
    }

    @Test("SCRAM's findings on a SASL2 login reach the caller (a low iteration count)")
    func sasl2Warnings() throws {
        var machine = try Self.sasl2Machine()
        Self.driveToSecuredFeatures(&machine)
        _ = try #require(Self.sent(machine.elementReceived(try Self.sasl2Features())))
        let lowCount = Self.serverFirst.replacingOccurrences(of: "i=4096", with: "i=1024")
        _ = try #require(Self.sent(machine.elementReceived(try parsedElement("<challenge xmlns='urn:xmpp:sasl:2'>\(Self.base64(lowCount))</challenge>"))))
        #expect(machine.warnings == ["\(SCRAMStateMachine.Warning.lowIterationCount(1024))"])
    }

    @Test("an EXPR token proves with the connection's tls-exporter data, and a success without the server's proof for it is refused")
    func boundTokenLogin() throws {
        let exporter = [UInt8](repeating: 0x42, count: 32)
        let token = FASTToken(secret: "secret-token:fast-e", expiry: Date(timeIntervalSinceNow: 86_400), mechanism: .tlsExporter)
        var machine = try Self.sasl2Machine(token: token)
        Self.driveToSecuredFeatures(&machine, channelBinding: ChannelBindingData(exporter: exporter))
        let features = try parsedElement(
            """
            <stream:features><authentication xmlns='urn:xmpp:sasl:2'><mechanism>SCRAM-SHA-256-PLUS</mechanism><mechanism>SCRAM-SHA-256</mechanism>\
            <inline><fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-EXPR</mechanism><mechanism>HT-SHA-256-NONE</mechanism></fast></inline>\
            </authentication><sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-exporter'/></sasl-channel-binding></stream:features>
            """
        )
        let authenticate = try #require(Self.sent(machine.elementReceived(features)))
        #expect(authenticate[attribute: "mechanism"] == "HT-SHA-256-EXPR")
        let initial = try #require(authenticate.firstChild(named: "initial-response", namespace: XMPPNamespace.sasl2))
        #expect(try SASL2Base64.decode(initial.text) == HashedTokenMechanism.initialResponse(username: "user", token: token.secret, channelBinding: exporter))
        // The server's proof over no channel binding is not the proof for this connection.
        let unbound = OpenSSLCrypto.hmac(.sha256, key: Array(token.secret.utf8), data: Array("Responder".utf8))
        let forged = try parsedElement(
            """
            <success xmlns='urn:xmpp:sasl:2'><additional-data>\(Data(unbound).base64EncodedString())</additional-data>\
            <authorization-identifier>user@example.com</authorization-identifier></success>
            """
        )
        guard case .close(.authenticationFailed(_, .invalidServerSignature)) = machine.elementReceived(forged) else {
            Issue.record("a proof for another channel was taken: \(Self.summary(machine.state))")
            return
        }
    }
}
