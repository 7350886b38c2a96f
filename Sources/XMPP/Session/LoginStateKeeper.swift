import Foundation
import NIOConcurrencyHelpers

/// What an account keeps from one login to the next: the id of its SASL2 `<user-agent>`
/// (XEP-0388 §2.3: a UUID v4, the same on every login, so the server ties its Bind 2
/// resource and FAST tokens to it) and its FAST token (XEP-0484). A change is handed to
/// `record` (the state, through the journal), never logged.
///
/// A token is kept with a check of the password it was asked for with: when the configured
/// password changes, the token is forgotten, so that a wrong new password shows at the next
/// login, not weeks later when the token expires. The check is 16 bits of an HMAC of the
/// password under the user agent id: it misses one change in 65,536, and tells someone
/// holding a copy of the state next to nothing about the password (a dictionary shrinks by
/// that factor, no more).
public final class LoginStateKeeper: Sendable {
    /// What is kept.
    public struct Stored: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
        public var userAgentID: String
        public var token: FASTToken?
        /// ``LoginStateKeeper/passwordCheck(_:userAgentID:)`` of the password the token
        /// was asked for with.
        public var passwordCheck: String?

        public init(userAgentID: String, token: FASTToken? = nil, passwordCheck: String? = nil) {
            self.userAgentID = userAgentID
            self.token = token
            self.passwordCheck = passwordCheck
        }

        public var description: String {
            "LoginStateKeeper.Stored(userAgentID: \(self.userAgentID), token: \(self.token.map { "\($0)" } ?? "none"))"
        }

        public var customMirror: Mirror {
            Mirror(self, children: ["userAgentID": self.userAgentID, "token": self.token as Any], displayStyle: .struct)
        }
    }

    private let stored: NIOLockedValueBox<Stored>
    private let record: @Sendable (Stored) -> Void
    private let now: @Sendable () -> Date
    private let passwordCheck: String

    /// - Parameters:
    ///   - stored: what an earlier run kept; nil: a new user agent id, no token.
    ///   - password: the account's password now; a token asked for with another is dropped.
    ///   - record: called with every change, to keep it.
    ///   - now: the wall clock FAST tokens expire by.
    ///   - makeUserAgentID: a new user agent id (``makeUserAgentID()``; injected by tests).
    public init(
        stored: Stored?, password: String, record: @escaping @Sendable (Stored) -> Void = { _ in }, now: @escaping @Sendable () -> Date = { Date() },
        makeUserAgentID: () -> String = LoginStateKeeper.makeUserAgentID
    ) {
        var kept = stored ?? Stored(userAgentID: makeUserAgentID())
        let check = Self.passwordCheck(password, userAgentID: kept.userAgentID)
        if kept.token != nil, kept.passwordCheck != check {
            kept.token = nil
            kept.passwordCheck = nil
        }
        self.stored = NIOLockedValueBox(kept)
        self.record = record
        self.now = now
        self.passwordCheck = check
        if kept != stored { record(kept) }
    }

    /// The first 16 bits of HMAC-SHA-256 of the password under the user agent id, base64:
    /// tells a changed password from the one a token was asked for with.
    public static func passwordCheck(_ password: String, userAgentID: String) -> String {
        Data(OpenSSLCrypto.hmac(.sha256, key: Array(userAgentID.utf8), data: Array(password.utf8)).prefix(2)).base64EncodedString()
    }

    /// A fresh UUID v4 (RFC 9562 §5.4).
    public static func makeUserAgentID() -> String {
        UUID().uuidString.lowercased()
    }

    /// What is kept now.
    public var current: Stored {
        self.stored.withLockedValue { $0 }
    }

    /// `login` with this account's user agent id and its token, if one is still usable.
    public func prepare(_ login: SASL2Login) -> SASL2Login {
        var login = login
        let stored = self.current
        login.userAgent.id = stored.userAgentID
        login.token = stored.token.flatMap { $0.isUsable(at: self.now()) ? $0 : nil }
        return login
    }

    /// Takes what a login brought: a new token is kept, a refused one forgotten.
    public func update(after outcome: LoginOutcome) {
        let changed: Stored? = self.stored.withLockedValue { stored in
            var next = stored
            if outcome.tokenRefused {
                next.token = nil
                next.passwordCheck = nil
            }
            if let token = outcome.newToken {
                next.token = token
                next.passwordCheck = self.passwordCheck
            }
            guard next != stored else { return nil }
            stored = next
            return next
        }
        if let changed { self.record(changed) }
    }

    /// The login that offered the token failed: a token the server refused before the
    /// stream went on to fail is not offered again.
    public func forgetToken() {
        let changed: Stored? = self.stored.withLockedValue { stored in
            guard stored.token != nil else { return nil }
            stored.token = nil
            stored.passwordCheck = nil
            return stored
        }
        if let changed { self.record(changed) }
    }
}
