import Testing

@testable import XMPP

/// SASL2's `<success>` and `<failure>` (XEP-0388 §2.6) as both servers send them, and the
/// malformed ones a login must not be built on.
@Suite("SASL2 outcome")
struct SASL2OutcomeTests {
    static func outcome(_ xml: String) throws -> SASL2Outcome {
        try SASL2Outcome(try parsedElement(xml))
    }

    @Test("Prosody's success after Bind 2 and inline stream management: data, the full JID last, the answers kept whole")
    func boundSuccess() throws {
        let outcome = try Self.outcome(
            """
            <success xmlns='urn:xmpp:sasl:2'><additional-data>dj1ybUY5cHFWOFM3c3VBb1pXamE0ZEpSa0ZzS1E9</additional-data>\
            <bound xmlns='urn:xmpp:bind:0'><enabled xmlns='urn:xmpp:sm:3' id='sm-1' resume='1' max='600'/></bound>\
            <token xmlns='urn:xmpp:fast:0' expiry='2026-12-21T10:00:00.000000Z' token='secret-token:fast-x'/>\
            <authorization-identifier>user@example.test/xmpp-bridge~AbCdEfGhIjKl</authorization-identifier></success>
            """
        )
        guard case .success(let success) = outcome else { Issue.record("not a success: \(outcome)"); return }
        #expect(success.additionalData == Array("v=rmF9pqV8S7suAoZWja4dJRkFsKQ=".utf8))
        #expect(success.authorizationIdentifier.description == "user@example.test/xmpp-bridge~AbCdEfGhIjKl")
        #expect(success.bindAnswer?.name == "bound" && success.bindAnswer?.firstChild(named: "enabled")?[attribute: "id"] == "sm-1")
        #expect(success.resumeAnswer == nil)
        #expect(success.token?[attribute: "token"] == "secret-token:fast-x")
    }

    @Test("an inline resumption answered, and a success without data or inline results (a bare JID)")
    func resumedAndBare() throws {
        guard case .success(let resumed) = try Self.outcome(
            "<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>u@example.test/r</authorization-identifier><resumed xmlns='urn:xmpp:sm:3' h='42' previd='sm-1'/></success>"
        ) else { Issue.record("not a success"); return }
        #expect(resumed.resumeAnswer?[attribute: "h"] == "42" && resumed.bindAnswer == nil && resumed.additionalData == nil)
        guard case .success(let bare) = try Self.outcome(
            "<success xmlns='urn:xmpp:sasl:2'><additional-data/><authorization-identifier> u@example.test </authorization-identifier></success>"
        ) else { Issue.record("not a success"); return }
        #expect(bare.authorizationIdentifier.description == "u@example.test" && bare.additionalData == [])
    }

    @Test("failures: the condition in RFC 6120's namespace, without it (Prosody), unknown or missing (not-authorized), with text")
    func failures() throws {
        #expect(
            try Self.outcome("<failure xmlns='urn:xmpp:sasl:2'><credentials-expired xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/><text>old token</text></failure>")
                == .failure(condition: .credentialsExpired, text: "old token")
        )
        #expect(try Self.outcome("<failure xmlns='urn:xmpp:sasl:2'><malformed-request/></failure>") == .failure(condition: .malformedRequest, text: nil))
        #expect(try Self.outcome("<failure xmlns='urn:xmpp:sasl:2'><bad-protocol xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/></failure>") == .failure(condition: .notAuthorized, text: nil))
        #expect(try Self.outcome("<failure xmlns='urn:xmpp:sasl:2'/>") == .failure(condition: .notAuthorized, text: nil))
    }

    @Test("malformed: no or two authorization identifiers, no JID, a bare JID where bound or resumed, bad base64, another element")
    func malformed() throws {
        #expect(throws: SASLError.malformedOutcome("0 <authorization-identifier> elements in <success>")) {
            try Self.outcome("<success xmlns='urn:xmpp:sasl:2'/>")
        }
        #expect(throws: SASLError.malformedOutcome("2 <authorization-identifier> elements in <success>")) {
            try Self.outcome(
                "<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>a@x.test</authorization-identifier><authorization-identifier>b@x.test</authorization-identifier></success>"
            )
        }
        #expect(throws: SASLError.self) { try Self.outcome("<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>@@</authorization-identifier></success>") }
        #expect(throws: SASLError.malformedOutcome("bound or resumed, but <authorization-identifier> is the bare JID u@x.test")) {
            try Self.outcome("<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>u@x.test</authorization-identifier><bound xmlns='urn:xmpp:bind:0'/></success>")
        }
        #expect(throws: SASLError.malformedOutcome("bound or resumed, but <authorization-identifier> is the bare JID u@x.test")) {
            try Self.outcome(
                "<success xmlns='urn:xmpp:sasl:2'><authorization-identifier>u@x.test</authorization-identifier><resumed xmlns='urn:xmpp:sm:3' h='1' previd='p'/></success>"
            )
        }
        #expect(throws: SASLError.invalidBase64) {
            try Self.outcome("<success xmlns='urn:xmpp:sasl:2'><additional-data>!!</additional-data><authorization-identifier>u@x.test</authorization-identifier></success>")
        }
        #expect(throws: SASLError.self) { try Self.outcome("<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>") }
        #expect(throws: SASLError.self) { try Self.outcome("<challenge xmlns='urn:xmpp:sasl:2'>AA==</challenge>") }
    }
}
