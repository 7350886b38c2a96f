import Testing

@testable import XMPP

/// XEP-0440 §3's rules and XEP-0474 §4's relaxation, case by case.
@Suite("channel-binding choice (XEP-0440)")
struct ChannelBindingChoiceTests {
    typealias Choice = ChannelBindingChoice
    static let both: Set<Choice.ChannelBindingType> = [.tlsExporter, .tlsServerEndPoint]

    @Test("the strongest type both sides have: tls-exporter over tls-server-end-point; tls-server-end-point where the exporter is not there")
    func strongest() throws {
        for profile in [Choice.Profile.sasl1, .sasl2] {
            #expect(try Choice.choose(offeredPlus: true, announcedTypes: ["tls-server-end-point", "tls-exporter"], available: Self.both, profile: profile) == .bind(.tlsExporter))
            #expect(try Choice.choose(offeredPlus: true, announcedTypes: ["tls-server-end-point", "tls-unique"], available: Self.both, profile: profile) == .bind(.tlsServerEndPoint))
            #expect(try Choice.choose(offeredPlus: true, announcedTypes: ["tls-exporter", "tls-server-end-point"], available: [.tlsServerEndPoint], profile: profile) == .bind(.tlsServerEndPoint))
        }
    }

    @Test("no data on this connection: n, whatever the server offers (rule 2)")
    func cannotBind() throws {
        #expect(try Choice.choose(offeredPlus: true, announcedTypes: ["tls-exporter"], available: [], profile: .sasl2) == .none(requiresDowngradeProtection: false))
        #expect(try Choice.choose(offeredPlus: false, announcedTypes: nil, available: [], profile: .sasl1) == .none(requiresDowngradeProtection: false))
    }

    @Test("neither -PLUS nor types: y (rule 3); -PLUS without types: refused with SASL2 (rule 4), tls-exporter with RFC 6120's SASL")
    func withoutTypes() throws {
        #expect(try Choice.choose(offeredPlus: false, announcedTypes: nil, available: Self.both, profile: .sasl2) == .notSupportedByServer)
        #expect(throws: SASLError.channelBindingInconsistent("-PLUS offered without XEP-0440's channel-binding types")) {
            try Choice.choose(offeredPlus: true, announcedTypes: nil, available: Self.both, profile: .sasl2)
        }
        #expect(try Choice.choose(offeredPlus: true, announcedTypes: nil, available: Self.both, profile: .sasl1) == .bind(.tlsExporter))
        #expect(try Choice.choose(offeredPlus: true, announcedTypes: nil, available: [.tlsServerEndPoint], profile: .sasl1) == .none(requiresDowngradeProtection: false))
    }

    @Test("types without -PLUS: refused (rule 5); only types we cannot use: n, and the server must prove it offered no more (rule 6, XEP-0474)")
    func unusable() throws {
        for profile in [Choice.Profile.sasl1, .sasl2] {
            #expect(throws: SASLError.channelBindingInconsistent("channel-binding types announced without a -PLUS mechanism")) {
                try Choice.choose(offeredPlus: false, announcedTypes: ["tls-exporter"], available: Self.both, profile: profile)
            }
            #expect(try Choice.choose(offeredPlus: true, announcedTypes: ["tls-unique"], available: Self.both, profile: profile) == .none(requiresDowngradeProtection: true))
            #expect(try Choice.choose(offeredPlus: true, announcedTypes: [], available: Self.both, profile: profile) == .none(requiresDowngradeProtection: true))
        }
    }
}
