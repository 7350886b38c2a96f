import Testing

@testable import XMPP

/// SASL negotiation tests: mechanism selection, PLAIN, a full SCRAM run,
/// failure mapping and the base64 helpers.
@Suite("SASLStateMachine")
struct SASLStateMachineTests {
    static let allOffered = SASLMechanism.allCases.map(\.rawValue)
    static let exporter = [UInt8](repeating: 0xAB, count: 32)

    static func machine(_ configuration: SASLConfiguration = SASLConfiguration()) -> SASLStateMachine {
        SASLStateMachine(
            username: "user",
            password: "pencil",
            clientNonce: "fyko+d2lbbFgONRv9qkxdawL",
            configuration: configuration
        )
    }

    static func text(_ bytes: [UInt8]?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }

    /// The mechanism and initial response of a `.sendAuth` action.
    static func auth(_ action: SASLStateMachine.Action) -> (mechanism: String, initial: String?)? {
        guard case .sendAuth(let mechanism, let initial) = action else { return nil }
        return (mechanism, text(initial))
    }

    // MARK: - Selection

    @Test("strongest offered mechanism first; -PLUS only with binding data")
    func strongestFirst() {
        var withBinding = Self.machine()
        let bound = Self.auth(withBinding.start(offeredMechanisms: Self.allOffered, tlsActive: true, channelBindingData: Self.exporter))
        #expect(bound?.mechanism == "SCRAM-SHA-256-PLUS")
        #expect(bound?.initial?.hasPrefix("p=tls-exporter,,n=user,r=") == true)
        #expect(withBinding.state == .authenticating(.scramSHA256Plus))

        var withoutBinding = Self.machine()
        let unbound = Self.auth(withoutBinding.start(offeredMechanisms: Self.allOffered, tlsActive: true, channelBindingData: nil))
        #expect(unbound?.mechanism == "SCRAM-SHA-256")
        // The server offers -PLUS, we cannot bind: 'n', never 'y' (RFC 5802 §6).
        #expect(unbound?.initial?.hasPrefix("n,,") == true)
    }

    @Test("selection order across the offered sets")
    func selectionTable() throws {
        let cases: [([String], Bool, Bool, SASLMechanism)] = [
            (["PLAIN", "SCRAM-SHA-1", "SCRAM-SHA-256"], true, false, .scramSHA256),
            (["PLAIN", "SCRAM-SHA-1"], true, false, .scramSHA1),
            (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-256"], true, true, .scramSHA1Plus),
            (["SCRAM-SHA-1-PLUS", "SCRAM-SHA-256"], true, false, .scramSHA256),
            (["SCRAM-SHA-256-PLUS", "SCRAM-SHA-1"], false, true, .scramSHA1),  // no TLS: no binding
            (["PLAIN"], true, false, .plain),
            ([" SCRAM-SHA-1\n", "X-OAUTH2"], true, false, .scramSHA1),
        ]
        for (offered, tls, binding, expected) in cases {
            let selected = try SASLStateMachine.selectMechanism(
                offered: offered, tlsActive: tls, channelBindingAvailable: binding, configuration: SASLConfiguration()
            )
            #expect(selected == expected, "offered \(offered), tls \(tls), binding \(binding)")
        }
    }

    @Test("configuration restricts the allowed mechanisms")
    func restrictedConfiguration() throws {
        let configuration = SASLConfiguration(allowedMechanisms: [.scramSHA1, .plain])
        let selected = try SASLStateMachine.selectMechanism(
            offered: Self.allOffered, tlsActive: true, channelBindingAvailable: true, configuration: configuration
        )
        #expect(selected == .scramSHA1)
    }

    @Test("client able to bind, server offers no -PLUS: GS2 flag y")
    func downgradeDetectionFlag() {
        var machine = Self.machine()
        let auth = Self.auth(
            machine.start(offeredMechanisms: ["SCRAM-SHA-256", "PLAIN"], tlsActive: true, channelBindingData: Self.exporter)
        )
        #expect(auth?.mechanism == "SCRAM-SHA-256")
        #expect(auth?.initial == "y,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")

        // If -PLUS mechanisms are disallowed locally, we do not claim support.
        var noPlus = Self.machine(SASLConfiguration(allowedMechanisms: [.scramSHA256]))
        let plain = Self.auth(
            noPlus.start(offeredMechanisms: ["SCRAM-SHA-256"], tlsActive: true, channelBindingData: Self.exporter)
        )
        #expect(plain?.initial?.hasPrefix("n,,") == true)
    }

    @Test("PLAIN is refused without TLS")
    func plainWithoutTLS() {
        var machine = Self.machine()
        #expect(machine.start(offeredMechanisms: ["PLAIN"], tlsActive: false, channelBindingData: nil) == .failed(.plainWithoutTLS))
        #expect(machine.state == .failed(.plainWithoutTLS))
    }

    @Test("PLAIN without TLS only with the explicit flag")
    func plainWithoutTLSAllowed() {
        var machine = Self.machine(SASLConfiguration(allowPlainWithoutTLS: true))
        let action = machine.start(offeredMechanisms: ["PLAIN"], tlsActive: false, channelBindingData: nil)
        #expect(action == .sendAuth(mechanism: "PLAIN", initialResponse: [0] + Array("user".utf8) + [0] + Array("pencil".utf8)))
    }

    @Test("no acceptable mechanism lists the offered ones")
    func noAcceptableMechanism() {
        var machine = Self.machine()
        let offered = ["X-OAUTH2", "DIGEST-MD5"]
        #expect(
            machine.start(offeredMechanisms: offered, tlsActive: true, channelBindingData: nil)
                == .failed(.noAcceptableMechanism(offered: offered))
        )
        #expect(SASLError.noAcceptableMechanism(offered: offered).description.contains("X-OAUTH2, DIGEST-MD5"))

        var empty = Self.machine()
        #expect(empty.start(offeredMechanisms: [], tlsActive: true, channelBindingData: nil) == .failed(.noAcceptableMechanism(offered: [])))
    }

    @Test("mechanism strength order")
    func strengthOrder() {
        #expect(SASLMechanism.strongestFirst == [.scramSHA256Plus, .scramSHA1Plus, .scramSHA256, .scramSHA1, .plain])
        #expect(SASLMechanism.plain < SASLMechanism.scramSHA1)
        #expect(SASLMechanism.scramSHA256 < SASLMechanism.scramSHA1Plus)
        #expect(SASLMechanism(rawValue: "SCRAM-SHA-1-PLUS") == .scramSHA1Plus)
    }

    // MARK: - Exchanges

    @Test("PLAIN exchange inside TLS (RFC 4616)")
    func plainExchange() {
        var machine = Self.machine()
        let action = machine.start(offeredMechanisms: ["PLAIN"], tlsActive: true, channelBindingData: nil)
        #expect(action == .sendAuth(mechanism: "PLAIN", initialResponse: Array("\0user\0pencil".utf8)))
        #expect(machine.successReceived(additionalData: []) == .succeeded)
        #expect(machine.state == .succeeded(.plain))
    }

    @Test("a challenge during PLAIN fails the exchange")
    func challengeDuringPLAIN() {
        var machine = Self.machine()
        _ = machine.start(offeredMechanisms: ["PLAIN"], tlsActive: true, channelBindingData: nil)
        guard case .failed(.unexpectedEvent) = machine.challengeReceived([1, 2, 3]) else {
            Issue.record("challenge during PLAIN was accepted")
            return
        }
    }

    @Test("full SCRAM-SHA-1 exchange with the RFC 5802 vectors")
    func scramExchange() {
        var machine = Self.machine()
        let auth = Self.auth(machine.start(offeredMechanisms: ["SCRAM-SHA-1", "PLAIN"], tlsActive: true, channelBindingData: nil))
        #expect(auth?.mechanism == "SCRAM-SHA-1")
        #expect(auth?.initial == "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL")

        let response = machine.challengeReceived(Array(SCRAMTests.sha1ServerFirst.utf8))
        #expect(response == .sendResponse(Array(SCRAMTests.sha1ClientFinal.utf8)))
        #expect(machine.successReceived(additionalData: Array(SCRAMTests.sha1ServerFinal.utf8)) == .succeeded)
        #expect(machine.state == .succeeded(.scramSHA1))
        #expect(machine.selectedMechanism == .scramSHA1)
        #expect(machine.warnings.isEmpty)
    }

    @Test("SCRAM warnings surface through the negotiation")
    func scramWarnings() {
        var machine = Self.machine()
        _ = machine.start(offeredMechanisms: ["SCRAM-SHA-1"], tlsActive: true, channelBindingData: nil)
        _ = machine.challengeReceived(
            Array("r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=100".utf8)
        )
        #expect(machine.warnings == [.lowIterationCount(100)])
    }

    @Test("SCRAM success without server signature fails")
    func scramSuccessWithoutSignature() {
        var machine = Self.machine()
        _ = machine.start(offeredMechanisms: ["SCRAM-SHA-1"], tlsActive: true, channelBindingData: nil)
        #expect(machine.successReceived(additionalData: []) == .failed(.missingServerSignature))
        // Later events leave it failed with the original error.
        #expect(machine.challengeReceived([]) == .failed(.missingServerSignature))
    }

    @Test("SCRAM with a bad server nonce fails")
    func scramBadNonce() {
        var machine = Self.machine()
        _ = machine.start(offeredMechanisms: ["SCRAM-SHA-1"], tlsActive: true, channelBindingData: nil)
        let action = machine.challengeReceived(Array("r=other,s=QSXCR+Q6sek8bf92,i=4096".utf8))
        #expect(action == .failed(.serverNonceMismatch))
    }

    @Test("unusable username is reported by start")
    func invalidUsername() {
        var machine = SASLStateMachine(username: "\u{0000}", password: "pencil", clientNonce: "abc")
        guard case .failed(.invalidUsername) = machine.start(offeredMechanisms: ["PLAIN"], tlsActive: true, channelBindingData: nil) else {
            Issue.record("NUL username accepted")
            return
        }
    }

    @Test("events before start are errors")
    func eventsBeforeStart() {
        var machine = Self.machine()
        guard case .failed(.unexpectedEvent) = machine.successReceived(additionalData: []) else {
            Issue.record("success before auth accepted")
            return
        }
    }

    @Test("the password never appears in the machine's description or dump")
    func passwordNotRevealed() {
        let secret = "s3cr3t-Pa55word"
        var machine = SASLStateMachine(username: "user", password: secret, clientNonce: "abc")
        _ = machine.start(offeredMechanisms: ["SCRAM-SHA-256"], tlsActive: true, channelBindingData: nil)
        var dumped = ""
        dump(machine, to: &dumped)
        #expect(!dumped.contains(secret))
        #expect(!String(describing: machine).contains(secret))
    }

    // MARK: - Failures

    @Test("failure conditions map from their element names (RFC 6120 §6.5)")
    func failureConditionMapping() {
        let names = [
            "aborted", "account-disabled", "credentials-expired", "encryption-required", "incorrect-encoding",
            "invalid-authzid", "invalid-mechanism", "malformed-request", "mechanism-too-weak", "not-authorized",
            "temporary-auth-failure",
        ]
        #expect(names.compactMap(SASLFailureCondition.init(elementName:)).count == names.count)
        #expect(SASLFailureCondition.allCases.map(\.elementName) == names)
        #expect(SASLFailureCondition(elementName: "not-authorized") == .notAuthorized)
        #expect(SASLFailureCondition(elementName: "temporary-auth-failure") == .temporaryAuthFailure)
        #expect(SASLFailureCondition(elementName: "bogus") == nil)
    }

    @Test("<failure/> ends the exchange with the condition and text")
    func failureReceived() {
        var machine = Self.machine()
        _ = machine.start(offeredMechanisms: ["SCRAM-SHA-1"], tlsActive: true, channelBindingData: nil)
        let action = machine.failureReceived(condition: .notAuthorized, text: "Invalid username or password")
        let expected = SASLError.failure(condition: .notAuthorized, text: "Invalid username or password")
        #expect(action == .failed(expected))
        #expect(machine.state == .failed(expected))
        #expect(expected.description == "SASL failure: not-authorized (Invalid username or password)")
    }

    // MARK: - Base64

    @Test("SASL base64 payloads (RFC 6120 §6.4.2)")
    func base64() throws {
        #expect(SASLBase64.encode([]) == "=")
        #expect(SASLBase64.encode(Array("n,,".utf8)) == "biws")
        #expect(try SASLBase64.decode("=") == [])
        #expect(try SASLBase64.decode("") == [])
        #expect(try SASLBase64.decode(" biws\n") == Array("n,,".utf8))
        let payload = [UInt8](0...255)
        #expect(try SASLBase64.decode(SASLBase64.encode(payload)) == payload)
        #expect(throws: SASLError.invalidBase64) { try SASLBase64.decode("bi*s") }
        #expect(throws: SASLError.invalidBase64) { try SASLBase64.decode("biw") }
    }
}
