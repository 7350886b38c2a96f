import Testing

@testable import XMPP

/// In-band registration (XEP-0077 §3.1) as the `.register` purpose of stream
/// negotiation: after TLS, fetch the form, submit username and password, and stop;
/// never authenticate, never send the password anywhere else.
@Suite("Registration negotiation (XEP-0077)")
struct RegistrationNegotiationTests {
    typealias Machine = StreamNegotiationStateMachine
    typealias Fixtures = StreamNegotiationStateMachineTests
    typealias Step = Fixtures.Step

    static let account = "newbot@example.org"
    static let password = "s3cr3t-Pa55-\u{1F511}"
    static let registerFeature = Fixtures.element("register", "http://jabber.org/features/iq-register")

    static func machine(tlsMode: TLSMode = .startTLS) throws -> Machine {
        Machine(
            configuration: .init(jid: try JID(account), tlsMode: tlsMode, sasl: SASLConfiguration(), purpose: .register),
            password: password,
            clientNonce: Fixtures.nonce,
            ids: StanzaIDGenerator(prefix: "r")
        )
    }

    /// Secured-stream features: SASL mechanisms, plus the register feature when `register`.
    static func securedFeatures(register: Bool) -> XMLElement {
        var features = Fixtures.features(mechanisms: Fixtures.allMechanisms)
        if register { features.append(registerFeature) }
        return features
    }

    static func query(_ children: [XMLElement] = []) -> XMLElement {
        Fixtures.element("query", "jabber:iq:register", children: children)
    }

    static func field(_ name: String, _ text: String? = nil) -> XMLElement {
        Fixtures.element(name, "jabber:iq:register", text: text)
    }

    static let formRequest = Fixtures.iq("get", "r-1", [query()])
    static let form = Fixtures.iq(
        "result", "r-1", [query([field("instructions", "Choose a username and password."), field("username"), field("password")])]
    )
    static let submission = Fixtures.iq("set", "r-2", [query([field("username", "newbot"), field("password", password)])])

    /// Whether `action` sends a SASL `<auth/>` (or any SASL element).
    static func sendsSASL(_ action: Machine.Action) -> Bool {
        guard case .send(let element) = action else { return false }
        return element.namespace == XMPPNamespace.sasl
    }

    /// Secured features with the register feature, form requested: awaiting the form.
    static func driveToFormRequested(_ machine: inout Machine, sourceLocation: SourceLocation = #_sourceLocation) {
        Fixtures.driveToSecuredFeatures(&machine, sourceLocation: sourceLocation)
        #expect(Step(machine.elementReceived(securedFeatures(register: true))) == .sending(formRequest), sourceLocation: sourceLocation)
        #expect(Fixtures.summary(machine.state) == "registering(r-1, submitted: false)", sourceLocation: sourceLocation)
    }

    /// Form answered, username and password submitted: awaiting the result.
    static func driveToSubmitted(_ machine: inout Machine, sourceLocation: SourceLocation = #_sourceLocation) {
        driveToFormRequested(&machine, sourceLocation: sourceLocation)
        #expect(Step(machine.elementReceived(form)) == .sending(submission), sourceLocation: sourceLocation)
        #expect(Fixtures.summary(machine.state) == "registering(r-2, submitted: true)", sourceLocation: sourceLocation)
    }

    // MARK: - Happy path

    @Test("TLS, form request, submission, result: every action exact")
    func happyPath() throws {
        var machine = try Self.machine()
        Self.driveToFormRequested(&machine)

        let sent = try #require(Fixtures.sent(machine.elementReceived(Self.form)))
        #expect(sent.name == "iq")
        #expect(sent[attribute: "type"] == "set")
        #expect(sent[attribute: "id"] == "r-2")
        let query = try #require(sent.elements.first)
        #expect(sent.elements.count == 1)
        #expect(query.name == "query")
        #expect(query.namespace == "jabber:iq:register")
        #expect(query.elements.map(\.name) == ["username", "password"])
        #expect(query.firstChild(named: "username")?.text == "newbot")
        #expect(query.firstChild(named: "password")?.text == Self.password)
        #expect(Fixtures.summary(machine.state) == "registering(r-2, submitted: true)")

        #expect(Step(machine.elementReceived(Fixtures.iq("result", "r-2"))) == .registered)
        #expect(Fixtures.summary(machine.state) == "closing")
        #expect(machine.authenticatedWith == nil)
        // The server's </stream:stream> then ends it cleanly.
        #expect(Step(machine.streamClosed()) == .finish)
    }

    @Test("a form in a different order, with extra informational children, is accepted")
    func formWithOtherChildren() throws {
        var machine = try Self.machine()
        Self.driveToFormRequested(&machine)
        let form = Fixtures.iq("result", "r-1", [Self.query([Self.field("password"), Self.field("instructions", "Hi"), Self.field("username")])])
        #expect(Step(machine.elementReceived(form)) == .sending(Self.submission))
    }

    @Test("the whole exchange never sends a SASL element")
    func noSASLInHappyPath() throws {
        var machine = try Self.machine()
        var actions: [Machine.Action] = []
        actions.append(machine.connected())
        actions.append(machine.streamOpened(attributes: Fixtures.header))
        actions.append(machine.elementReceived(Fixtures.features(startTLS: true, mechanisms: Fixtures.allMechanisms)))
        actions.append(machine.elementReceived(Fixtures.proceed))
        actions.append(machine.tlsEstablished(channelBinding: .none))
        actions.append(machine.streamOpened(attributes: Fixtures.header))
        actions.append(machine.elementReceived(Self.securedFeatures(register: true)))
        actions.append(machine.elementReceived(Self.form))
        actions.append(machine.elementReceived(Fixtures.iq("result", "r-2")))
        #expect(actions.map(Step.init) == [
            .sendStreamHeader, .none, .sending(Fixtures.starttls), .startTLS, .restartStream, .none,
            .sending(Self.formRequest), .sending(Self.submission), .registered,
        ])
        #expect(!actions.contains(where: Self.sendsSASL))
    }

    // MARK: - Refusals

    @Test("secured features without the register feature → registrationFailed(not-offered), and no <auth/> is ever sent")
    func notOffered() throws {
        var machine = try Self.machine()
        Fixtures.driveToSecuredFeatures(&machine)
        let action = machine.elementReceived(Self.securedFeatures(register: false))
        #expect(
            Step(action) == .close(.registrationFailed(condition: "not-offered", text: "the server does not offer in-band registration"))
        )
        #expect(!Self.sendsSASL(action))
        #expect(Fixtures.failure(of: machine.state) == .registrationFailed(condition: "not-offered", text: "the server does not offer in-band registration"))

        // Whatever the server sends next, no SASL element and nothing else goes out.
        let later = [
            machine.elementReceived(Fixtures.challenge(Fixtures.serverFirst)),
            machine.elementReceived(Fixtures.success(Fixtures.serverFinal)),
            machine.elementReceived(Self.securedFeatures(register: true)),
        ]
        #expect(later.map(Step.init) == [.none, .none, .none])
    }

    @Test("the register feature in the plaintext features does not count: STARTTLS comes first")
    func registerFeatureBeforeTLSIsNotUsed() throws {
        var machine = try Self.machine()
        #expect(Step(machine.connected()) == .sendStreamHeader)
        #expect(Step(machine.streamOpened(attributes: Fixtures.header)) == .none)
        var plain = Fixtures.features(startTLS: true, mechanisms: Fixtures.allMechanisms)
        plain.append(Self.registerFeature)
        #expect(Step(machine.elementReceived(plain)) == .sending(Fixtures.starttls))
        #expect(Fixtures.summary(machine.state) == "awaitingProceed")
    }

    @Test("no STARTTLS offered → tlsNotOffered; the form is never requested")
    func noTLS() throws {
        var machine = try Self.machine()
        _ = machine.connected()
        _ = machine.streamOpened(attributes: Fixtures.header)
        var plain = Fixtures.features(mechanisms: Fixtures.allMechanisms)
        plain.append(Self.registerFeature)
        #expect(Step(machine.elementReceived(plain)) == .close(.tlsNotOffered))
    }

    @Test(
        "an error answer to the submission → registrationFailed with its condition and text",
        arguments: [
            ("conflict", nil), ("conflict", "Username already exists"), ("not-acceptable", "Password too weak"),
            ("not-allowed", nil), ("resource-constraint", "Try later"),
        ] as [(String, String?)]
    )
    func submissionRefused(condition: String, text: String?) throws {
        var machine = try Self.machine()
        Self.driveToSubmitted(&machine)
        let action = machine.elementReceived(Fixtures.iqError("r-2", condition: condition, text: text))
        #expect(Step(action) == .close(.registrationFailed(condition: condition, text: text)))
        #expect(Fixtures.failure(of: machine.state) == .registrationFailed(condition: condition, text: text))
    }

    @Test("an error answer to the form request → registrationFailed, nothing submitted")
    func formRequestRefused() throws {
        var machine = try Self.machine()
        Self.driveToFormRequested(&machine)
        let action = machine.elementReceived(Fixtures.iqError("r-1", condition: "service-unavailable"))
        #expect(Step(action) == .close(.registrationFailed(condition: "service-unavailable", text: nil)))
    }

    @Test(
        "a form lacking username or password → registrationFailed(unsupported-form), password not sent",
        arguments: [
            [field("username")],
            [field("password")],
            [field("instructions", "Use the web form."), field("username"), field("email")],
            [],
        ]
    )
    func unsupportedForm(children: [XMLElement]) throws {
        var machine = try Self.machine()
        Self.driveToFormRequested(&machine)
        let action = machine.elementReceived(Fixtures.iq("result", "r-1", [Self.query(children)]))
        #expect(
            Step(action)
                == .close(.registrationFailed(condition: "unsupported-form", text: "the server asks for fields other than username and password"))
        )
        if case .registrationFailed(let condition, _) = Fixtures.failure(of: machine.state) {
            #expect(condition == "unsupported-form")
        } else {
            Issue.record("not failed: \(Fixtures.summary(machine.state))")
        }
    }

    @Test("a form result without any query → registrationFailed(unsupported-form)")
    func formWithoutQuery() throws {
        var machine = try Self.machine()
        Self.driveToFormRequested(&machine)
        let action = machine.elementReceived(Fixtures.iq("result", "r-1"))
        #expect(
            Step(action)
                == .close(.registrationFailed(condition: "unsupported-form", text: "the server asks for fields other than username and password"))
        )
    }

    @Test("an answer with the wrong id is an unexpected element, not the form")
    func wrongID() throws {
        var machine = try Self.machine()
        Self.driveToFormRequested(&machine)
        let action = machine.elementReceived(Fixtures.iq("result", "r-9", [Self.query([Self.field("username"), Self.field("password")])]))
        #expect(Step(action) == .closeWithStreamError(.unsupportedStanzaType, .unexpectedElement("iq")))
    }

    @Test("timing out while registering closes with connection-timeout")
    func timeout() throws {
        var machine = try Self.machine()
        Self.driveToSubmitted(&machine)
        #expect(Step(machine.timedOut()) == .closeWithStreamError(.connectionTimeout, .timedOut("stream negotiation")))
    }

    // MARK: - The password stays secret

    @Test("the password never appears in String(describing:), String(reflecting:) or dump at any step")
    func passwordNotInDescriptions() throws {
        func leaks(_ machine: Machine) -> [String] {
            var dumped = ""
            dump(machine, to: &dumped)
            return [String(describing: machine), String(reflecting: machine), dumped, "\(machine.state)"].filter {
                $0.contains(Self.password) || $0.contains("s3cr3t")
            }
        }
        var machine = try Self.machine()
        #expect(leaks(machine).isEmpty)
        Self.driveToFormRequested(&machine)
        #expect(leaks(machine).isEmpty)
        _ = machine.elementReceived(Self.form)
        #expect(leaks(machine).isEmpty)
        _ = machine.elementReceived(Fixtures.iqError("r-2", condition: "conflict", text: "taken"))
        #expect(leaks(machine).isEmpty)
        if let error = Fixtures.failure(of: machine.state) {
            #expect(!error.description.contains("s3cr3t"))
        }

        var done = try Self.machine()
        Self.driveToSubmitted(&done)
        _ = done.elementReceived(Fixtures.iq("result", "r-2"))
        #expect(leaks(done).isEmpty)
    }
}
