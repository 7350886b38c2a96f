import OMEMOState
import Testing

@testable import OMEMO

/// The trust rules (XEP-0384 v0.3 §7): blind trust before verification, manual trust, and
/// decisions by hand, each change returned for the journal.
@Suite("OMEMO trust")
struct OMEMOTrustTests {
    static let first: [UInt8] = [0x05] + Array(repeating: 1, count: 32)
    static let second: [UInt8] = [0x05] + Array(repeating: 2, count: 32)
    static let third: [UInt8] = [0x05] + Array(repeating: 3, count: 32)

    @Test("blind: new keys are trusted until one of the contact's keys is verified; then a new key waits; keys trusted before stay")
    func blind() {
        var trust = OMEMOTrust(policy: .blind)
        #expect(!trust.trusts(Self.first, for: "bob@example.org"))
        #expect(trust.observe(Self.first, for: "bob@example.org") == .trust(jid: "bob@example.org", identityKey: Self.first, .blind))
        #expect(trust.observe(Self.first, for: "bob@example.org") == nil)
        #expect(trust.trusts(Self.first, for: "bob@example.org"))
        #expect(trust.decide(.verified, Self.second, for: "bob@example.org") == .trust(jid: "bob@example.org", identityKey: Self.second, .verified))
        _ = trust.observe(Self.third, for: "bob@example.org")
        #expect(trust.level(of: Self.third, for: "bob@example.org") == .undecided)
        #expect(!trust.trusts(Self.third, for: "bob@example.org"))
        #expect(trust.trusts(Self.first, for: "bob@example.org"))
        // Another contact is not affected.
        _ = trust.observe(Self.third, for: "carol@example.org")
        #expect(trust.trusts(Self.third, for: "carol@example.org"))
    }

    @Test("manual: only verified keys are trusted; a distrusted key is not, and deciding the same twice changes nothing")
    func manual() {
        var trust = OMEMOTrust(policy: .manual)
        _ = trust.observe(Self.first, for: "bob@example.org")
        #expect(trust.level(of: Self.first, for: "bob@example.org") == .undecided)
        #expect(!trust.trusts(Self.first, for: "bob@example.org"))
        #expect(trust.decide(.verified, Self.first, for: "bob@example.org") != nil)
        #expect(trust.decide(.verified, Self.first, for: "bob@example.org") == nil)
        #expect(trust.trusts(Self.first, for: "bob@example.org"))
        #expect(trust.decide(.distrusted, Self.first, for: "bob@example.org") != nil)
        #expect(!trust.trusts(Self.first, for: "bob@example.org"))
    }
}
