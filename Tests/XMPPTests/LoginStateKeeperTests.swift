import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import XMPP

/// What an account keeps between logins (XEP-0388 user agent, XEP-0484 FAST token): made
/// once, handed to each login while usable, renewed, forgotten when refused or when the
/// password changed, never shown.
@Suite("LoginStateKeeper")
struct LoginStateKeeperTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let login = SASL2Login(userAgent: .init(id: "", software: "xmpp-bridge"), bindTag: "xmpp-bridge", requestsToken: true)

    static func token(_ secret: String, expiresIn seconds: TimeInterval) -> FASTToken {
        FASTToken(secret: secret, expiry: now.addingTimeInterval(seconds), mechanism: .tlsExporter)
    }

    @Test("a new account gets a UUID v4 user agent id, recorded at once and the same on every login")
    func newUserAgent() {
        let recorded = NIOLockedValueBox<[LoginStateKeeper.Stored]>([])
        let keeper = LoginStateKeeper(stored: nil, password: "pw", record: { stored in recorded.withLockedValue { $0.append(stored) } }, now: { Self.now })
        let id = keeper.current.userAgentID
        #expect(LoginStateKeeper(stored: nil, password: "pw", makeUserAgentID: { "injected" }).current.userAgentID == "injected")
        #expect(id.count == 36 && id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        #expect(Array(id)[14] == "4", "version 4")
        #expect(recorded.withLockedValue { $0.map(\.userAgentID) } == [id])
        #expect(keeper.prepare(Self.login).userAgent.id == id && keeper.prepare(Self.login).userAgent.id == id)
        #expect(keeper.prepare(Self.login).token == nil)
        #expect(LoginStateKeeper(stored: nil, password: "pw").current.userAgentID != id)
    }

    @Test("a new token is kept and used while it lasts (not within an hour of its expiry); a refused one is forgotten")
    func tokens() {
        let recorded = NIOLockedValueBox<[LoginStateKeeper.Stored]>([])
        let keeper = LoginStateKeeper(
            stored: .init(userAgentID: "ua"), password: "pw", record: { stored in recorded.withLockedValue { $0.append(stored) } }, now: { Self.now }
        )
        #expect(recorded.withLockedValue { $0.isEmpty }, "nothing changed, nothing recorded")
        var outcome = LoginOutcome()
        outcome.newToken = Self.token("t-1", expiresIn: 86_400)
        keeper.update(after: outcome)
        #expect(keeper.prepare(Self.login).token?.secret == "t-1")
        #expect(recorded.withLockedValue { $0.last?.token?.secret } == "t-1")
        keeper.update(after: LoginOutcome())
        #expect(recorded.withLockedValue { $0.count } == 1, "a login that changed nothing records nothing")

        outcome.newToken = Self.token("t-2", expiresIn: 1_800)
        keeper.update(after: outcome)
        #expect(keeper.prepare(Self.login).token == nil, "half an hour left: the password logs in")

        var refused = LoginOutcome()
        refused.tokenRefused = true
        keeper.update(after: refused)
        #expect(keeper.current.token == nil && keeper.current.passwordCheck == nil)
        #expect(recorded.withLockedValue { $0.last?.token } == nil)
    }

    @Test("a token asked for with another password is forgotten at start, and that is recorded")
    func passwordChanged() {
        let check = LoginStateKeeper.passwordCheck("old", userAgentID: "ua")
        let stored = LoginStateKeeper.Stored(userAgentID: "ua", token: Self.token("t-1", expiresIn: 86_400), passwordCheck: check)
        let recorded = NIOLockedValueBox<[LoginStateKeeper.Stored]>([])
        let same = LoginStateKeeper(stored: stored, password: "old", record: { s in recorded.withLockedValue { $0.append(s) } }, now: { Self.now })
        #expect(same.prepare(Self.login).token?.secret == "t-1")
        #expect(recorded.withLockedValue { $0.isEmpty })
        let changed = LoginStateKeeper(stored: stored, password: "new", record: { s in recorded.withLockedValue { $0.append(s) } }, now: { Self.now })
        #expect(changed.prepare(Self.login).token == nil)
        #expect(recorded.withLockedValue { $0 } == [LoginStateKeeper.Stored(userAgentID: "ua")])
        #expect(check != LoginStateKeeper.passwordCheck("old", userAgentID: "other"), "salted by the user agent id")
    }

    @Test("the secret and the password check show in no description or dump")
    func secretHidden() {
        let check = LoginStateKeeper.passwordCheck("pw", userAgentID: "ua")
        let keeper = LoginStateKeeper(stored: .init(userAgentID: "ua", token: Self.token("secret-token:xyz", expiresIn: 86_400), passwordCheck: check), password: "pw")
        #expect(keeper.current.token != nil)
        for value in [keeper.prepare(Self.login) as Any, keeper.current as Any] {
            var dumped = ""
            dump(value, to: &dumped)
            #expect(!dumped.contains("secret-token:xyz") && !dumped.contains(check), "\(dumped)")
            #expect(!"\(value)".contains("secret-token:xyz") && !"\(value)".contains(check))
        }
    }

    @Test("the password check is 16 bits: it tells a changed password, and little else")
    func passwordCheckSize() throws {
        let check = try #require(Data(base64Encoded: LoginStateKeeper.passwordCheck("pw", userAgentID: "ua")))
        #expect(check.count == 2)
        let differing = (0..<64).filter { LoginStateKeeper.passwordCheck("pw\($0)", userAgentID: "ua") != LoginStateKeeper.passwordCheck("pw", userAgentID: "ua") }
        #expect(differing.count >= 63)
    }

    @Test("a login that offered the token and failed forgets it: it is not offered again")
    func failedTokenLogin() {
        let keeper = LoginStateKeeper(
            stored: .init(userAgentID: "ua", token: Self.token("t", expiresIn: 86_400), passwordCheck: LoginStateKeeper.passwordCheck("pw", userAgentID: "ua")),
            password: "pw", now: { Self.now }
        )
        #expect(keeper.prepare(Self.login).token != nil)
        keeper.forgetToken()
        #expect(keeper.prepare(Self.login).token == nil)
    }
}
