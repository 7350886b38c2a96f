import Testing

@testable import XMPP

/// XEP-0474 downgrade protection: the hash over the advertised mechanisms and
/// channel-binding types, with the XEP's own vector, and what a mismatch or a missing
/// hash does.
@Suite("SCRAM downgrade protection (XEP-0474)")
struct DowngradeProtectionTests {
    /// XEP-0474 §3's example: SCRAM-SHA-1 and -PLUS, tls-exporter and tls-server-end-point.
    static let example = DowngradeProtection(
        mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], channelBindingTypes: ["tls-server-end-point", "tls-exporter"]
    )

    @Test("the XEP's vector, from lists in any order; the input is sorted and joined by U+001E and U+001F")
    func vector() throws {
        #expect(Self.example.hashInput == Array("SCRAM-SHA-1\u{1E}SCRAM-SHA-1-PLUS\u{1F}tls-exporter\u{1E}tls-server-end-point".utf8))
        #expect(SASLBase64.encode(Self.example.expectedHash(.sha1)) == "G6k/rBLDqgOhRRaCuuatSDFkJ08=")
        try Self.example.verify("G6k/rBLDqgOhRRaCuuatSDFkJ08=", algorithm: .sha1)
        // SHA-256 over a longer list (computed with Python's hashlib).
        let longer = DowngradeProtection(
            mechanisms: ["SCRAM-SHA-256-PLUS", "PLAIN", "SCRAM-SHA-1", "SCRAM-SHA-256", "SCRAM-SHA-1-PLUS"], channelBindingTypes: ["tls-exporter"]
        )
        #expect(SASLBase64.encode(longer.expectedHash(.sha256)) == "HOCahVXz+V8p+Esg88C95qG5k09nEAJUDMu7QMK43gY=")
        // Without XEP-0440 types, no U+001F part.
        let plain = DowngradeProtection(mechanisms: ["SCRAM-SHA-1", "PLAIN"], channelBindingTypes: nil)
        #expect(SASLBase64.encode(plain.expectedHash(.sha1)) == "Y+xk2TW25vKwG9yWicfQlsuiFQs=")
    }

    @Test("an offer removed on the way (a -PLUS mechanism, a channel-binding type) is a downgrade")
    func mismatch() {
        let stripped = DowngradeProtection(mechanisms: ["SCRAM-SHA-1"], channelBindingTypes: ["tls-server-end-point", "tls-exporter"])
        #expect(throws: SASLError.downgradeDetected) { try stripped.verify("G6k/rBLDqgOhRRaCuuatSDFkJ08=", algorithm: .sha1) }
        let noTypes = DowngradeProtection(mechanisms: ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-1"], channelBindingTypes: nil)
        #expect(throws: SASLError.downgradeDetected) { try noTypes.verify("G6k/rBLDqgOhRRaCuuatSDFkJ08=", algorithm: .sha1) }
        #expect(throws: SASLError.downgradeDetected) { try Self.example.verify("G6k/rBLDqgOhRRaCuuatSDFkJ08=", algorithm: .sha256) }
        #expect(throws: SASLError.invalidBase64) { try Self.example.verify("not base64!", algorithm: .sha1) }
    }

    @Test("a missing hash passes unless the client settled for no channel binding because of unknown types")
    func missing() throws {
        try Self.example.verify(nil, algorithm: .sha1)
        var required = Self.example
        required.required = true
        #expect(throws: SASLError.downgradeProtectionMissing) { try required.verify(nil, algorithm: .sha1) }
    }
}
