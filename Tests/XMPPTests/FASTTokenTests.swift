import Foundation
import Testing

@testable import XMPP

/// A FAST token from `<success>` (XEP-0484 §3.3) as Prosody and ejabberd write it, the
/// ones not kept, and a secret that never shows.
@Suite("FAST token")
struct FASTTokenTests {
    static func element(_ xml: String) throws -> XMLElement {
        try parsedElement(xml)
    }

    @Test("Prosody's expiry with six fractional digits, ejabberd's without, an offset; usable until an hour before it expires")
    func read() throws {
        let prosody = try #require(
            FASTToken(try Self.element("<token xmlns='urn:xmpp:fast:0' expiry='2026-12-21T10:00:00.123456Z' token='secret-token:fast-1'/>"), mechanism: .tlsExporter)
        )
        #expect(prosody.secret == "secret-token:fast-1" && prosody.mechanism == .tlsExporter)
        #expect(abs(prosody.expiry.timeIntervalSince1970 - 1_797_847_200.123) < 0.01)
        let ejabberd = try #require(FASTToken(try Self.element("<token xmlns='urn:xmpp:fast:0' token='abc' expiry='2026-12-21T10:00:00Z'/>"), mechanism: .none))
        #expect(ejabberd.expiry.timeIntervalSince1970 == 1_797_847_200)
        let offset = try #require(FASTToken(try Self.element("<token xmlns='urn:xmpp:fast:0' token='abc' expiry='2026-12-21T12:00:00+02:00'/>"), mechanism: .none))
        #expect(offset.expiry == ejabberd.expiry)
        let expiry = ejabberd.expiry
        #expect(ejabberd.isUsable(at: expiry.addingTimeInterval(-3601)))
        #expect(!ejabberd.isUsable(at: expiry.addingTimeInterval(-3599)))
        #expect(!ejabberd.isUsable(at: expiry.addingTimeInterval(10)))
    }

    @Test("not kept: no secret, an empty one, no expiry, a date that is no XEP-0082 date-time, another element")
    func refused() throws {
        for xml in [
            "<token xmlns='urn:xmpp:fast:0' expiry='2026-12-21T10:00:00Z'/>",
            "<token xmlns='urn:xmpp:fast:0' token='' expiry='2026-12-21T10:00:00Z'/>",
            "<token xmlns='urn:xmpp:fast:0' token='abc'/>",
            "<token xmlns='urn:xmpp:fast:0' token='abc' expiry='21 Dec 2026'/>",
            "<token xmlns='urn:xmpp:fast:1' token='abc' expiry='2026-12-21T10:00:00Z'/>",
        ] {
            #expect(FASTToken(try Self.element(xml), mechanism: .none) == nil, "\(xml)")
        }
    }

    @Test("the secret is in no description or mirror")
    func secretHidden() {
        let token = FASTToken(secret: "secret-token:fast-hidden", expiry: Date(timeIntervalSince1970: 1_797_847_200), mechanism: .tlsExporter)
        #expect(token.description == "FAST token for HT-SHA-256-EXPR, expires 2026-12-21T10:00:00Z")
        #expect(!"\(token)".contains("hidden") && !String(reflecting: token).contains("hidden") && !"\(Mirror(reflecting: token).children.map(\.value))".contains("hidden"))
    }
}
