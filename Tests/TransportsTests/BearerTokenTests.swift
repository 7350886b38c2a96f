import Testing
import TransportCore

@testable import HTTPIngress

/// `Authorization: Bearer <token>` (RFC 6750 §2.1): the scheme in any case, the token
/// exactly, compared over every byte.
@Suite("BearerToken")
struct BearerTokenTests {
    static let token = BearerToken("s3cret-Token_0123456789abcdef")

    @Test("the right token is accepted whatever the scheme's case", arguments: ["Bearer", "bearer", "BEARER", "bEaReR"])
    func schemeCase(scheme: String) {
        #expect(Self.token.accepts(authorization: "\(scheme) s3cret-Token_0123456789abcdef"))
    }

    @Test("extra spaces between scheme and token are skipped")
    func extraSpaces() {
        #expect(Self.token.accepts(authorization: "Bearer    s3cret-Token_0123456789abcdef"))
    }

    @Test(
        "wrong, shorter, longer, differently cased or padded tokens are refused",
        arguments: [
            "Bearer s3cret-Token_0123456789abcdeX",  // last byte differs
            "Bearer X3cret-Token_0123456789abcdef",  // first byte differs
            "Bearer s3cret-Token_0123456789abcde",  // a prefix
            "Bearer s3cret-Token_0123456789abcdefg",  // longer
            "Bearer s3cret-Token_0123456789abcdef ",  // trailing space
            "Bearer S3CRET-TOKEN_0123456789ABCDEF",  // the token is case-sensitive
            "Bearer s",
            "Bearer ",
            "Bearer",
            "Bearer  ",
            "",
            "s3cret-Token_0123456789abcdef",  // no scheme
            "Basic s3cret-Token_0123456789abcdef",
            "Bearers3cret-Token_0123456789abcdef",  // no space after the scheme
            "Bearer\ts3cret-Token_0123456789abcdef",  // a tab is not the separator
            "Token s3cret-Token_0123456789abcdef",
        ]
    )
    func refused(header: String) {
        #expect(!Self.token.accepts(authorization: header))
    }

    @Test("no Authorization header is refused")
    func missingHeader() {
        #expect(!Self.token.accepts(authorization: nil))
    }

    @Test("an empty configured token accepts nothing")
    func emptyToken() {
        let empty = BearerToken("")
        for header in ["Bearer ", "Bearer", "Bearer  ", "Bearer x", ""] {
            #expect(!empty.accepts(authorization: header))
        }
        #expect(!empty.accepts(authorization: nil))
    }

    @Test("non-ASCII tokens compare byte for byte")
    func unicode() {
        let token = BearerToken("clé-🔑")
        #expect(token.accepts(authorization: "Bearer clé-🔑"))
        // The same text in another normalisation (e + combining acute) is other bytes.
        #expect(!token.accepts(authorization: "Bearer cle\u{301}-🔑"))
    }

    @Test("equal() folds the lengths in: a longer input with a zero tail still differs")
    func equalLengths() {
        #expect(BearerToken.equal([1, 2, 3], [1, 2, 3]))
        #expect(!BearerToken.equal([1, 2, 3], [1, 2, 3, 0]))
        #expect(!BearerToken.equal([], [0]))
        #expect(!BearerToken.equal([1, 2, 3], [1, 2, 4]))
        #expect(BearerToken.equal([], []))
    }
}
