import Foundation
import Testing

@testable import XMPP

/// Tests for ``JID`` (RFC 7622) and its part preparation.
@Suite("JID")
struct JIDTests {
    // MARK: - Vectors

    static let validVectors: [String] = [
        "juliet@example.com",
        "juliet@example.com/foo",
        "juliet@example.com/foo bar",
        "juliet@example.com/foo@bar",
        "foo\\20bar@example.com",
        "fussball@example.com",
        "fußball@example.com",
        "π@example.com",
        "Σ@example.com/foo",
        "σ@example.com/foo",
        "ς@example.com/foo",
        "king@example.com/♚",
        "example.com",
        "example.com/foobar",
        "a.example.com/b@example.net",
        "example.com.",
        "[::1]",
        "127.0.0.1",
        "juliet@[::1]/foo",
        "juliet@127.0.0.1/foo",
        "münchen.de",
        "xn--mnchen-3ya.de",
        "l·l@example.com",
        "juliet@example.com/foo/bar",
    ]

    static let invalidVectors: [String] = [
        "\"juliet\"@example.com",
        "foo bar@example.com",
        "juliet@example.com/",
        "henryⅣ@example.com",
        "♚@example.com",
        "juliet@",
        "/foobar",
        "@example.net/",
        "::1",
        "[zz::1]",
        "example.com:5222",
        "",
        "@",
        "/",
        ".",
        "example..com",
        ".example.com",
        "exa mple.com",
        "juliet@example.com/foo\u{7}",
        "a@b@example.com",
    ]

    @Test("valid JIDs parse", arguments: validVectors)
    func validVectorParses(_ input: String) throws {
        let jid = try JID(input)
        #expect(!jid.domainpart.isEmpty)
    }

    @Test("invalid JIDs are rejected", arguments: invalidVectors)
    func invalidVectorThrows(_ input: String) {
        #expect(throws: JIDError.self) {
            try JID(input)
        }
    }

    static let errorVectors: [(String, JIDError)] = [
        ("\"juliet\"@example.com", .forbiddenCharacterInLocalpart("\"")),
        ("foo bar@example.com", .disallowedCodePoint(part: .localpart, scalar: " ")),
        ("juliet@example.com/", .emptyResourcepart),
        // Ⅳ (U+2163) is lowercased to ⅳ (U+2173) first; both are compatibility characters.
        ("henryⅣ@example.com", .disallowedCodePoint(part: .localpart, scalar: "\u{2173}")),
        ("♚@example.com", .disallowedCodePoint(part: .localpart, scalar: "\u{265A}")),
        ("juliet@", .emptyDomainpart),
        ("/foobar", .emptyDomainpart),
        ("@example.net/", .emptyLocalpart),
        ("::1", .invalidDomain(reason: .colonOutsideIPv6Literal)),
        ("example.com:5222", .invalidDomain(reason: .colonOutsideIPv6Literal)),
        ("[zz::1]", .invalidDomain(reason: .invalidIPv6Literal("[zz::1]"))),
        ("[::1", .invalidDomain(reason: .invalidIPv6Literal("[::1"))),
        ("300.1.1.1", .invalidDomain(reason: .invalidIPv4Address("300.1.1.1"))),
        ("example..com", .invalidDomain(reason: .emptyLabel)),
        ("-example.com", .invalidDomain(reason: .hyphenAtLabelBoundary(label: "-example"))),
        ("example.com/foo\u{7}", .disallowedCodePoint(part: .resourcepart, scalar: "\u{7}")),
        ("exa mple.com", .disallowedCodePoint(part: .domainpart, scalar: " ")),
        ("a@b@example.com", .disallowedCodePoint(part: .domainpart, scalar: "@")),
        ("a·b@example.com", .contextRuleViolation(part: .localpart, scalar: "\u{B7}")),
        // A fullwidth @ does not split (RFC 7622 §3.1 parses before preparing),
        // but width mapping turns it into a forbidden '@' afterwards.
        ("ｊｕｌｉｅｔ＠example.com", .disallowedCodePoint(part: .domainpart, scalar: "@")),
        ("a＠b@example.com", .forbiddenCharacterInLocalpart("@")),
        (".", .emptyDomainpart),
    ]

    @Test("specific errors", arguments: errorVectors)
    func specificError(_ input: String, _ expected: JIDError) {
        #expect(throws: expected) {
            try JID(input)
        }
    }

    // MARK: - Parsing and preparation

    static let partVectors: [(String, String?, String, String?)] = [
        ("juliet@example.com", "juliet", "example.com", nil),
        ("juliet@example.com/foo bar", "juliet", "example.com", "foo bar"),
        ("juliet@example.com/foo@bar", "juliet", "example.com", "foo@bar"),
        ("juliet@example.com/foo/bar", "juliet", "example.com", "foo/bar"),
        ("a.example.com/b@example.net", nil, "a.example.com", "b@example.net"),
        ("foo\\20bar@example.com", "foo\\20bar", "example.com", nil),
        ("fußball@example.com", "fußball", "example.com", nil),
        ("Σ@example.com/foo", "σ", "example.com", "foo"),
        ("ς@example.com/foo", "ς", "example.com", "foo"),
        ("king@example.com/♚", "king", "example.com", "♚"),
        ("Juliet@Example.COM/Foo", "juliet", "example.com", "Foo"),
        ("example.com.", nil, "example.com", nil),
        ("example.com./res", nil, "example.com", "res"),
        ("[::1]", nil, "[::1]", nil),
        ("[0:0::1]", nil, "[::1]", nil),
        ("[::FFFF:1.2.3.4]", nil, "[::ffff:1.2.3.4]", nil),
        ("127.0.0.1", nil, "127.0.0.1", nil),
        ("MÜNCHEN.de", nil, "münchen.de", nil),
        ("example\u{3002}com", nil, "example.com", nil),
        // Width mapping and lowercasing of the localpart.
        ("ＪＵＬＩＥＴ@example.com", "juliet", "example.com", nil),
        // NFC in every part; case and width preserved in the resourcepart.
        ("e\u{301}@e\u{301}.com/E\u{301}Ｘ", "\u{E9}", "\u{E9}.com", "\u{C9}Ｘ"),
        // OpaqueString maps non-ASCII spaces to U+0020.
        ("juliet@example.com/a\u{A0}b\u{3000}c", "juliet", "example.com", "a b c"),
        // A slash is found even when a combining mark follows it.
        ("juliet@example.com/\u{301}x", "juliet", "example.com", "\u{301}x"),
    ]

    @Test("parts are split and prepared", arguments: partVectors)
    func parts(_ vector: (String, String?, String, String?)) throws {
        let jid = try JID(vector.0)
        #expect(jid.localpart == vector.1)
        #expect(jid.domainpart == vector.2)
        #expect(jid.resourcepart == vector.3)
    }

    @Test("description round trips", arguments: validVectors + partVectors.map(\.0))
    func descriptionRoundTrip(_ input: String) throws {
        let jid = try JID(input)
        let reparsed = try JID(jid.description)
        #expect(reparsed == jid)
        #expect(reparsed.description == jid.description)
    }

    @Test func descriptionFormatting() throws {
        #expect(try JID("juliet@example.com/foo bar").description == "juliet@example.com/foo bar")
        #expect(try JID("Juliet@Example.COM/Foo").description == "juliet@example.com/Foo")
        #expect(try JID("example.com.").description == "example.com")
        #expect(try JID("a.example.com/b@example.net").description == "a.example.com/b@example.net")
        #expect(String(describing: try JID("[::1]")) == "[::1]")
    }

    // MARK: - Length limits (RFC 7622 §3.2–§3.4)

    /// A domain of exactly `bytes` octets made of 9-letter labels.
    static func domain(bytes: Int) -> String {
        let labels = bytes / 10
        let tail = bytes - labels * 10
        let head = String(repeating: "aaaaaaaaa.", count: labels)
        return tail == 0 ? head + "b" : head + String(repeating: "b", count: tail)
    }

    @Test func localpartLength() throws {
        let ok = String(repeating: "a", count: 1023)
        #expect(try JID("\(ok)@example.com").localpart == ok)
        #expect(throws: JIDError.localpartTooLong(bytes: 1024)) {
            try JID("\(ok)a@example.com")
        }
        let multibyte = String(repeating: "é", count: 511) + "a"
        #expect(try JID("\(multibyte)@example.com").localpart?.utf8.count == 1023)
        #expect(throws: JIDError.localpartTooLong(bytes: 1024)) {
            try JID(String(repeating: "é", count: 512) + "@example.com")
        }
        // Measured after preparation: 1200 octets of decomposed input compose to 800.
        let decomposed = String(repeating: "e\u{301}", count: 400)
        #expect(decomposed.utf8.count == 1200)
        #expect(try JID("\(decomposed)@example.com").localpart?.utf8.count == 800)
    }

    @Test func rawInputLimit() throws {
        // 1023 fullwidth letters are 3069 raw octets but prepare to 1023.
        let fullwidth = String(repeating: "Ａ", count: 1023)
        #expect(try JID("\(fullwidth)@example.com").localpart == String(repeating: "a", count: 1023))
        // Hostile sizes are rejected before preparation, reporting the raw size.
        let huge = String(repeating: "é", count: 100_000)
        #expect(throws: JIDError.localpartTooLong(bytes: 200_000)) {
            try JID("\(huge)@example.com")
        }
        #expect(throws: JIDError.domainpartTooLong(bytes: 200_000)) {
            try JID(huge)
        }
        #expect(throws: JIDError.resourcepartTooLong(bytes: 200_000)) {
            try JID("example.com/\(huge)")
        }
    }

    @Test func domainpartLength() throws {
        let ok = Self.domain(bytes: 1023)
        #expect(ok.utf8.count == 1023)
        #expect(try JID(ok).domainpart == ok)
        #expect(try JID("juliet@\(ok)/r").domainpart == ok)
        // The trailing dot is removed before measuring.
        #expect(try JID(ok + ".").domainpart == ok)
        let tooLong = Self.domain(bytes: 1024)
        #expect(tooLong.utf8.count == 1024)
        #expect(throws: JIDError.domainpartTooLong(bytes: 1024)) {
            try JID(tooLong)
        }
    }

    @Test func resourcepartLength() throws {
        let ok = String(repeating: "R", count: 1023)
        #expect(try JID("juliet@example.com/\(ok)").resourcepart == ok)
        #expect(throws: JIDError.resourcepartTooLong(bytes: 1024)) {
            try JID("juliet@example.com/\(ok)R")
        }
        #expect(throws: JIDError.resourcepartTooLong(bytes: 1024)) {
            try JID("example.com/" + String(repeating: "é", count: 512))
        }
        #expect(throws: JIDError.resourcepartTooLong(bytes: 1024)) {
            try JID("juliet@example.com").withResource(ok + "R")
        }
    }

    @Test func domainLabelLength() throws {
        let label63 = String(repeating: "a", count: 63)
        #expect(try JID("\(label63).com").domainpart == "\(label63).com")
        #expect(throws: JIDError.invalidDomain(reason: .labelTooLong(label: label63 + "a", bytes: 64))) {
            try JID("\(label63)a.com")
        }
        // Non-ASCII labels are measured as A-labels: "xn--" + 58 + "-" + encoding > 63.
        let longIDN = String(repeating: "a", count: 58) + "ü"
        #expect(throws: JIDError.self) {
            try JID("\(longIDN).de")
        }
    }

    // MARK: - Bare and full JIDs

    @Test func bareAndFull() throws {
        let full = try JID("juliet@example.com/balcony")
        #expect(full.isFull)
        #expect(!full.isBare)
        #expect(full.bare == (try JID("juliet@example.com")))
        #expect(full.bare.isBare)
        #expect(!full.bare.isFull)
        #expect(full.bare.resourcepart == nil)
        #expect(full.bare.bare == full.bare)

        let domainFull = try JID("example.com/foobar")
        #expect(domainFull.isFull)
        #expect(domainFull.localpart == nil)
        #expect(domainFull.bare == (try JID("example.com")))
        #expect(domainFull.bare.description == "example.com")
    }

    @Test func withResource() throws {
        let bare = try JID("juliet@example.com")
        let full = try bare.withResource("balcony")
        #expect(full == (try JID("juliet@example.com/balcony")))
        #expect(full.isFull)
        #expect(try full.withResource("Chamber").resourcepart == "Chamber")
        #expect(try bare.withResource("a/b@c").description == "juliet@example.com/a/b@c")
        #expect(try bare.withResource("E\u{301}").resourcepart == "\u{C9}")
        #expect(throws: JIDError.emptyResourcepart) {
            try bare.withResource("")
        }
        #expect(throws: JIDError.disallowedCodePoint(part: .resourcepart, scalar: "\u{0}")) {
            try bare.withResource("a\u{0}b")
        }
    }

    @Test func initFromParts() throws {
        let jid = try JID(localpart: "Juliet", domainpart: "Example.COM.", resourcepart: "a/b")
        #expect(jid.localpart == "juliet")
        #expect(jid.domainpart == "example.com")
        #expect(jid.resourcepart == "a/b")
        #expect(jid == (try JID("juliet@example.com/a/b")))
        #expect(try JID(domainpart: "example.com") == (try JID("example.com")))
        #expect(throws: JIDError.emptyLocalpart) {
            try JID(localpart: "", domainpart: "example.com")
        }
        #expect(throws: JIDError.emptyDomainpart) {
            try JID(localpart: "juliet", domainpart: "")
        }
        #expect(throws: JIDError.emptyResourcepart) {
            try JID(domainpart: "example.com", resourcepart: "")
        }
        #expect(throws: JIDError.forbiddenCharacterInLocalpart("@")) {
            try JID(localpart: "a@b", domainpart: "example.com")
        }
        #expect(throws: JIDError.disallowedCodePoint(part: .domainpart, scalar: "/")) {
            try JID(domainpart: "example.com/foo")
        }
        #expect(throws: JIDError.disallowedCodePoint(part: .domainpart, scalar: "@")) {
            try JID(domainpart: "juliet@example.com")
        }
    }

    // MARK: - Equality and hashing

    @Test func caseInsensitiveLocalAndDomain() throws {
        let upper = try JID("Σ@example.com")
        let lower = try JID("σ@example.com")
        #expect(upper == lower)
        #expect(upper.hashValue == lower.hashValue)
        #expect(Set([upper, lower]).count == 1)
        #expect(try JID("Σ@example.com/foo").bare == lower)
        #expect(try JID("ς@example.com") != lower)
    }

    @Test func resourceIsCaseSensitive() throws {
        let a = try JID("Juliet@Example.COM/Foo")
        let b = try JID("juliet@example.com/Foo")
        let c = try JID("juliet@example.com/foo")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
        #expect(Set([a, b, c]).contains(try JID("JULIET@EXAMPLE.COM/Foo")))
        #expect(a.bare == c.bare)
    }

    @Test func distinctJIDs() throws {
        let jids = try [
            "fussball@example.com", "fußball@example.com", "juliet@example.com",
            "juliet@example.com/foo", "example.com", "example.com/foo",
        ].map { (string) throws(JIDError) in try JID(string) }
        #expect(Set(jids).count == jids.count)
        #expect(try JID("example.com.") == (try JID("example.com")))
        #expect(try JID("[0::1]") == (try JID("[::1]")))
    }

    // MARK: - Codable

    @Test func codableAsString() throws {
        let jid = try JID("juliet@example.com/balcony")
        let data = try JSONEncoder().encode([jid])
        #expect(String(decoding: data, as: UTF8.self) == #"["juliet@example.com\/balcony"]"#)
        let decoded = try JSONDecoder().decode([JID].self, from: data)
        #expect(decoded == [jid])
        let invalid = Data(#"["juliet@"]"#.utf8)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([JID].self, from: invalid)
        }
    }

    // MARK: - Errors and helpers

    @Test(arguments: errorVectors.map(\.1))
    func errorDescriptionsAreReadable(_ error: JIDError) {
        #expect(error.description.hasPrefix("invalid JID: "))
        #expect(error.localizedDescription == error.description)
    }

    @Test(arguments: [
        ("münchen", "mnchen-3ya"),
        ("bücher", "bcher-kva"),
        ("他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),
        ("ليهمابتكلموشعربي؟", "egbpdaj6bu4bxfgehfvwxn"),
    ])
    func punycode(_ input: String, _ expected: String) {
        #expect(Punycode.encode(Array(input.unicodeScalars)) == expected)
    }

    @Test func derivedProperties() {
        typealias P = JIDPartPreparation
        #expect(P.derivedProperty(of: "a", in: .identifier) == .valid)
        #expect(P.derivedProperty(of: " ", in: .identifier) == .disallowed)
        #expect(P.derivedProperty(of: " ", in: .freeform) == .valid)
        #expect(P.derivedProperty(of: "\u{265A}", in: .identifier) == .disallowed)
        #expect(P.derivedProperty(of: "\u{265A}", in: .freeform) == .valid)
        #expect(P.derivedProperty(of: "\u{2163}", in: .identifier) == .disallowed)
        #expect(P.derivedProperty(of: "\u{2163}", in: .freeform) == .valid)
        #expect(P.derivedProperty(of: "\u{DF}", in: .identifier) == .valid)
        #expect(P.derivedProperty(of: "\u{3C2}", in: .identifier) == .valid)
        #expect(P.derivedProperty(of: "\u{640}", in: .freeform) == .disallowed)
        #expect(P.derivedProperty(of: "\u{200D}", in: .identifier) == .contextJ)
        #expect(P.derivedProperty(of: "\u{AD}", in: .freeform) == .disallowed)
        #expect(P.derivedProperty(of: "\u{7}", in: .freeform) == .disallowed)
        #expect(P.derivedProperty(of: "\u{1100}", in: .freeform) == .disallowed)
        #expect(P.derivedProperty(of: "\u{E000}", in: .freeform) == .disallowed)
        #expect(P.derivedProperty(of: "_", in: .idna) == .valid)
        #expect(P.derivedProperty(of: "!", in: .idna) == .disallowed)
        #expect(P.derivedProperty(of: "!", in: .identifier) == .valid)
    }

    @Test func contextRules() throws {
        // ZERO WIDTH JOINER is only allowed after a virama.
        #expect(try JID("\u{915}\u{94D}\u{200D}@example.com").localpart == "\u{915}\u{94D}\u{200D}")
        #expect(throws: JIDError.contextRuleViolation(part: .localpart, scalar: "\u{200D}")) {
            try JID("a\u{200D}b@example.com")
        }
        // Arabic-Indic and Extended Arabic-Indic digits may not be mixed.
        #expect(try JID("\u{661}\u{662}@example.com").localpart == "\u{661}\u{662}")
        #expect(throws: JIDError.contextRuleViolation(part: .localpart, scalar: "\u{661}")) {
            try JID("\u{661}\u{6F2}@example.com")
        }
        // KATAKANA MIDDLE DOT needs Hiragana, Katakana or Han nearby.
        #expect(try JID("\u{30A2}\u{30FB}\u{30A4}@example.com").localpart != nil)
        #expect(throws: JIDError.contextRuleViolation(part: .localpart, scalar: "\u{30FB}")) {
            try JID("a\u{30FB}b@example.com")
        }
    }
}
