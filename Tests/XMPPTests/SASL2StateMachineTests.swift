import Testing

@testable import XMPP

/// A SASL2 exchange (XEP-0388) end to end on RFC 7677's SCRAM-SHA-256 vector, and with a
/// FAST token; what the server may get wrong, and a refused token.
@Suite("SASL2 exchange")
struct SASL2StateMachineTests {
    static func element(_ xml: String) throws -> XMLElement {
        try parsedElement(xml)
    }

    static func features(fast: Bool = false) throws -> SASL2Features {
        let inline = fast ? "<inline><fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-NONE</mechanism></fast></inline>" : ""
        return try #require(
            SASL2Features(try Self.element("<stream:features><authentication xmlns='urn:xmpp:sasl:2'><mechanism>SCRAM-SHA-256</mechanism>\(inline)</authentication></stream:features>"))
        )
    }

    static let request = SASL2Request(mechanism: "", initialResponse: nil, userAgent: .init(id: "d4565fa7-4d72-4749-b3d3-740edbf87770"))
    static let password = SASL2StateMachine.Credential.password(SASLStateMachine(username: "user", password: "pencil", clientNonce: SCRAMTests.sha256ClientNonce))
    static let token = FASTToken(secret: "secret-token:fast-0123456789abcdef", expiry: .distantFuture, mechanism: .none)

    static func sent(_ action: SASL2StateMachine.Action) -> String? {
        if case .send(let element) = action { return XMLSerializer.string(element) }
        return nil
    }

    static func success(data: String?) -> String {
        let additional = data.map { "<additional-data>\(SASL2Base64.encode(Array($0.utf8)))</additional-data>" } ?? ""
        return "<success xmlns='urn:xmpp:sasl:2'>\(additional)<authorization-identifier>user@example.test</authorization-identifier></success>"
    }

    /// A machine past the SCRAM challenge, waiting for the outcome.
    static func challenged() throws -> SASL2StateMachine {
        var machine = SASL2StateMachine()
        _ = machine.start(Self.password, offered: try Self.features(), tlsActive: true, channelBinding: .none, announcedTypes: nil, request: Self.request)
        let challenge = "<challenge xmlns='urn:xmpp:sasl:2'>\(SASL2Base64.encode(Array(SCRAMTests.sha256ServerFirst.utf8)))</challenge>"
        let response = Self.sent(machine.received(try Self.element(challenge)))
        #expect(response == #"<response xmlns="urn:xmpp:sasl:2">"# + SASL2Base64.encode(Array(SCRAMTests.sha256ClientFinal.utf8)) + "</response>")
        return machine
    }

    @Test("SCRAM-SHA-256 over SASL2: <authenticate> with the client-first-message, <response> with the client-final, <success> with v=")
    func scram() throws {
        var machine = SASL2StateMachine()
        let first = Self.sent(machine.start(Self.password, offered: try Self.features(), tlsActive: true, channelBinding: .none, announcedTypes: nil, request: Self.request))
        #expect(
            first == #"<authenticate xmlns="urn:xmpp:sasl:2" mechanism="SCRAM-SHA-256"><initial-response>"#
                + SASL2Base64.encode(Array("n,,n=user,r=\(SCRAMTests.sha256ClientNonce)".utf8))
                + #"</initial-response><user-agent id="d4565fa7-4d72-4749-b3d3-740edbf87770"/></authenticate>"#
        )
        machine = try Self.challenged()
        guard case .succeeded(let success) = machine.received(try Self.element(Self.success(data: SCRAMTests.sha256ServerFinal))) else {
            Issue.record("not logged in: \(machine.state)")
            return
        }
        #expect(success.authorizationIdentifier.description == "user@example.test" && machine.mechanism == "SCRAM-SHA-256")
    }

    @Test("the server unproven or refusing: a wrong or missing v=, a <failure>, a <continue>, another element; each ends the login")
    func refused() throws {
        var wrong = try Self.challenged()
        guard case .failed(.invalidServerSignature) = wrong.received(try Self.element(Self.success(data: "v=AAAA"))) else { Issue.record("accepted a wrong v="); return }
        var missing = try Self.challenged()
        guard case .failed(.missingServerSignature) = missing.received(try Self.element(Self.success(data: nil))) else { Issue.record("accepted no v="); return }
        var failure = try Self.challenged()
        guard case .failed(.failure(.notAuthorized, "wrong")) = failure.received(
            try Self.element("<failure xmlns='urn:xmpp:sasl:2'><not-authorized xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/><text>wrong</text></failure>")
        ) else { Issue.record("no failure"); return }
        var tasks = try Self.challenged()
        guard case .failed(.unexpectedEvent) = tasks.received(try Self.element("<continue xmlns='urn:xmpp:sasl:2'><tasks><task>UPGR-SCRAM-SHA-256</task></tasks></continue>")) else {
            Issue.record("went on with tasks")
            return
        }
        var stray = try Self.challenged()
        guard case .failed(.unexpectedEvent) = stray.received(try Self.element("<message xmlns='jabber:client'/>")) else { Issue.record("took a message"); return }
        var late = stray
        guard case .failed = late.received(try Self.element(Self.success(data: SCRAMTests.sha256ServerFinal))) else { Issue.record("a failed login went on"); return }
    }

    @Test("a FAST token: <fast/> and the hashed-token proof; the server's proof checked; a refused token asks for the password on the same stream")
    func token() throws {
        var machine = SASL2StateMachine()
        let credential = SASL2StateMachine.Credential.token(Self.token, username: "user", channelBinding: [])
        let first = Self.sent(machine.start(credential, offered: try Self.features(fast: true), tlsActive: true, channelBinding: .none, announcedTypes: nil, request: Self.request))
        #expect(
            first == #"<authenticate xmlns="urn:xmpp:sasl:2" mechanism="HT-SHA-256-NONE"><initial-response>dXNlcgBRStt1QmslvXxm2z6lDdckzr8ydMQ3K/JIeje+WP+Mxg==</initial-response>"#
                + #"<user-agent id="d4565fa7-4d72-4749-b3d3-740edbf87770"/><fast xmlns="urn:xmpp:fast:0"/></authenticate>"#
        )
        var proven = machine
        let proof = "<success xmlns='urn:xmpp:sasl:2'><additional-data>pY+5JudGS08DJ+Bie7P76tHf9+t/0UEV+3SJL4Uj+j4=</additional-data><authorization-identifier>user@example.test</authorization-identifier></success>"
        guard case .succeeded = proven.received(try Self.element(proof)) else { Issue.record("a proven token login failed"); return }
        var unproven = machine
        guard case .failed(.missingServerSignature) = unproven.received(try Self.element(Self.success(data: nil))) else { Issue.record("accepted no proof"); return }
        var refused = machine
        guard case .tokenRefused(.credentialsExpired) = refused.received(
            try Self.element("<failure xmlns='urn:xmpp:sasl:2'><credentials-expired xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/></failure>")
        ) else { Issue.record("no token refusal"); return }
        #expect(Self.sent(refused.start(Self.password, offered: try Self.features(fast: true), tlsActive: true, channelBinding: .none, announcedTypes: nil, request: Self.request)) != nil)
        var notOffered = SASL2StateMachine()
        guard case .failed(.noAcceptableMechanism) = notOffered.start(credential, offered: try Self.features(), tlsActive: true, channelBinding: .none, announcedTypes: nil, request: Self.request) else {
            Issue.record("used a token the server does not offer FAST for")
            return
        }
    }
}
