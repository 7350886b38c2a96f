import Testing

@testable import XMPP

/// Resuming a stream management session instead of binding (XEP-0198 §5; issue 9).
extension StreamNegotiationStateMachineTests {
    static let smNamespace = StreamManagementStateMachine.namespace

    static func featuresWithSM() -> XMLElement {
        var features = Self.features(bind: true)
        features.append(XMLElement(name: "sm", namespace: Self.smNamespace))
        return features
    }

    static func resumeRequest() throws -> Machine.ResumeRequest {
        Machine.ResumeRequest(previousID: "sm-7", handled: 41, jid: try JID("user@example.com/bridge"))
    }

    @Test("with a session to resume and SM offered: <resume previd h/>; <resumed/> is ready with the old full JID")
    func resumeAccepted() throws {
        var machine = try Self.machine(resume: try Self.resumeRequest())
        Self.driveToAuthenticatedFeatures(&machine)
        let resume = try #require(Self.sent(machine.elementReceived(Self.featuresWithSM())))
        #expect(resume.name == "resume" && resume.namespace == Self.smNamespace)
        #expect(resume[attribute: "previd"] == "sm-7" && resume[attribute: "h"] == "41")
        #expect(Self.summary(machine.state) == "resuming(sm-7, h: 41)")
        let resumed = Self.element("resumed", Self.smNamespace, attributes: [("previd", "sm-7"), ("h", "12")])
        #expect(Step(machine.elementReceived(resumed)) == .ready(try JID("user@example.com/bridge"), StreamFeatures(Self.featuresWithSM())))
        #expect(machine.resumeAnswer == resumed)
    }

    @Test("<failed/> to a resume goes on to bind a new session, keeping the answer for the SM machine")
    func resumeRefused() throws {
        var machine = try Self.machine(resume: try Self.resumeRequest())
        Self.driveToAuthenticatedFeatures(&machine)
        _ = machine.elementReceived(Self.featuresWithSM())
        let failed = Self.element(
            "failed", Self.smNamespace, attributes: [("h", "10")], children: [Self.element("item-not-found", "urn:ietf:params:xml:ns:xmpp-stanzas")]
        )
        #expect(Step(machine.elementReceived(failed)) == .sending(Self.bindRequest("t-1", resource: nil)))
        #expect(Self.summary(machine.state) == "binding(t-1)")
        #expect(machine.resumeAnswer == failed)
    }

    @Test("no SM offered: bind as usual; a <resumed/> for another session is refused")
    func resumeNotOffered() throws {
        var plain = try Self.machine(resume: try Self.resumeRequest())
        Self.driveToAuthenticatedFeatures(&plain)
        #expect(Step(plain.elementReceived(Self.features(bind: true))) == .sending(Self.bindRequest("t-1", resource: nil)))
        #expect(plain.resumeAnswer == nil)

        var other = try Self.machine(resume: try Self.resumeRequest())
        Self.driveToAuthenticatedFeatures(&other)
        _ = other.elementReceived(Self.featuresWithSM())
        let wrong = Self.element("resumed", Self.smNamespace, attributes: [("previd", "sm-8"), ("h", "0")])
        guard case .closeWithStreamError = Step(other.elementReceived(wrong)) else {
            Issue.record("a resumed answer for another session was accepted")
            return
        }
    }
}
