import Foundation
import NIOConcurrencyHelpers

/// What an account keeps from one login to the next: the id of its SASL2 `<user-agent>`
/// (XEP-0388 §2.3: a UUID v4, the same on every login, so the server ties its Bind 2
/// resource and FAST tokens to it) and its FAST token (XEP-0484). A change is handed to
/// `record` (the state, through the journal), never logged.
public final class LoginStateKeeper: Sendable {
    /// What is kept.
    public struct Stored: Hashable, Sendable {
        public var userAgentID: String
        public var token: FASTToken?

        public init(userAgentID: String, token: FASTToken? = nil) {
            self.userAgentID = userAgentID
            self.token = token
        }
    }

    private let stored: NIOLockedValueBox<Stored>
    private let record: @Sendable (Stored) -> Void
    private let now: @Sendable () -> Date

    /// - Parameters:
    ///   - stored: what an earlier run kept; nil: a new user agent id, no token.
    ///   - record: called with every change, to keep it.
    ///   - now: the wall clock FAST tokens expire by.
    public init(stored: Stored?, record: @escaping @Sendable (Stored) -> Void = { _ in }, now: @escaping @Sendable () -> Date = { Date() }) {
        self.stored = NIOLockedValueBox(stored ?? Stored(userAgentID: Self.makeUserAgentID()))
        self.record = record
        self.now = now
        if stored == nil { record(self.stored.withLockedValue { $0 }) }
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
            if outcome.tokenRefused { next.token = nil }
            if let token = outcome.newToken { next.token = token }
            guard next != stored else { return nil }
            stored = next
            return next
        }
        if let changed { self.record(changed) }
    }

    /// The password changed: a token issued for the old one is worthless (XEP-0484 §5).
    public func forgetToken() {
        let changed: Stored? = self.stored.withLockedValue { stored in
            guard stored.token != nil else { return nil }
            stored.token = nil
            return stored
        }
        if let changed { self.record(changed) }
    }
}
