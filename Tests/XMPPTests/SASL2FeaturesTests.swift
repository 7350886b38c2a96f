import Testing

@testable import XMPP

/// The SASL2 stream feature (XEP-0388 §2.1) as Prosody 13 (with mod_sasl2, mod_sasl2_bind2,
/// mod_sasl2_sm and mod_sasl2_fast) and ejabberd 24.12 send it, parsed from the wire.
@Suite("SASL2 features")
struct SASL2FeaturesTests {
    static func features(_ xml: String) throws -> StreamFeatures {
        StreamFeatures(try parsedElement("<stream:features>\(xml)</stream:features>"))
    }

    @Test("everything inline: mechanisms in order, Bind 2 with its features, inline resumption, FAST mechanisms")
    func everything() throws {
        let features = try Self.features(
            """
            <authentication xmlns='urn:xmpp:sasl:2'><mechanism>SCRAM-SHA-256-PLUS</mechanism><mechanism> SCRAM-SHA-256 </mechanism>\
            <inline><bind xmlns='urn:xmpp:bind:0'><inline><feature var='urn:xmpp:carbons:2'/><feature var='urn:xmpp:sm:3'/></inline></bind>\
            <sm xmlns='urn:xmpp:sm:3'/><fast xmlns='urn:xmpp:fast:0'><mechanism>HT-SHA-256-EXPR</mechanism><mechanism>HT-SHA-256-NONE</mechanism></fast>\
            </inline></authentication>\
            <sasl-channel-binding xmlns='urn:xmpp:sasl-cb:0'><channel-binding type='tls-exporter'/></sasl-channel-binding>\
            <mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism></mechanisms>
            """
        )
        let sasl2 = try #require(features.sasl2)
        #expect(sasl2.mechanisms == ["SCRAM-SHA-256-PLUS", "SCRAM-SHA-256"])
        #expect(sasl2.bind2Features == ["urn:xmpp:carbons:2", "urn:xmpp:sm:3"])
        #expect(sasl2.inlineResumption)
        #expect(sasl2.fastMechanisms == ["HT-SHA-256-EXPR", "HT-SHA-256-NONE"])
        #expect(features.mechanisms == ["SCRAM-SHA-1"], "RFC 6120's list stays its own")
        #expect(features.channelBindingTypes == ["tls-exporter"])
    }

    @Test("no inline part: Bind 2, resumption and FAST are not offered; Bind 2 without an inline list enables nothing")
    func bare() throws {
        let plain = try #require(try Self.features("<authentication xmlns='urn:xmpp:sasl:2'><mechanism>PLAIN</mechanism></authentication>").sasl2)
        #expect(plain.mechanisms == ["PLAIN"] && plain.bind2Features == nil && !plain.inlineResumption && plain.fastMechanisms == nil)
        let bindOnly = try #require(
            try Self.features("<authentication xmlns='urn:xmpp:sasl:2'><mechanism>PLAIN</mechanism><inline><bind xmlns='urn:xmpp:bind:0'/></inline></authentication>").sasl2
        )
        #expect(bindOnly.bind2Features == [])
    }

    @Test("not SASL2: an <authentication> in another namespace, or none, or the obsolete Bind 2 namespace")
    func absent() throws {
        #expect(try Self.features("<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms>").sasl2 == nil)
        #expect(try Self.features("<authentication xmlns='urn:xmpp:sasl:1'><mechanism>PLAIN</mechanism></authentication>").sasl2 == nil)
        let obsolete = try #require(
            try Self.features("<authentication xmlns='urn:xmpp:sasl:2'><mechanism>PLAIN</mechanism><inline><bind xmlns='urn:xmpp:bind2:1'/></inline></authentication>").sasl2
        )
        #expect(obsolete.bind2Features == nil)
    }
}
