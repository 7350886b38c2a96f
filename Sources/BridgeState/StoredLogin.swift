import Foundation

/// What an account keeps between its logins, as the state stores it (table `logins`): the
/// id of its SASL2 user agent (XEP-0388 §2.3), the same on every login and every instance,
/// and its FAST token (XEP-0484), a credential like the password. The XMPP library's own
/// form is converted at the account's edge; the state knows no XMPP. The token never
/// appears in a description or a mirror.
package struct StoredLogin: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
    /// A FAST token with its mechanism and expiry; its secret shows in no description.
    package struct Token: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
        package var secret: String
        package var mechanism: String
        package var expiry: Date
        /// Tells the password the token was asked for with from another (an HMAC of it).
        package var passwordCheck: String

        package init(secret: String, mechanism: String, expiry: Date, passwordCheck: String) {
            self.secret = secret
            self.mechanism = mechanism
            self.expiry = expiry
            self.passwordCheck = passwordCheck
        }

        package var description: String { "Token(\(self.mechanism), expires \(StorageTimestamp.text(self.expiry)))" }

        package var customMirror: Mirror {
            Mirror(self, children: ["mechanism": self.mechanism, "expiry": self.expiry], displayStyle: .struct)
        }
    }

    package var userAgentID: String
    package var token: Token?

    /// The table, the same in SQLite and PostgreSQL.
    package static let table = """
        CREATE TABLE logins (
          transport text PRIMARY KEY,
          user_agent_id text NOT NULL,
          token text,
          mechanism text,
          expires_at text,
          password_check text
        );
        """

    package init(userAgentID: String, token: Token? = nil) {
        self.userAgentID = userAgentID
        self.token = token
    }

    /// The columns, in the order of ``columns(transport:)``.
    package static let columnList = "transport, user_agent_id, token, mechanism, expires_at, password_check"

    /// The row's values: transport, user agent id, token, mechanism, expiry (text), password check.
    package func columns(transport: String) -> [String?] {
        [
            transport, self.userAgentID, self.token?.secret, self.token?.mechanism, self.token.map { StorageTimestamp.text($0.expiry) },
            self.token?.passwordCheck,
        ]
    }

    /// A row read back (the columns of ``columns(transport:)`` after the transport); a token
    /// missing any part is no token.
    package init?(userAgentID: String?, token: String?, mechanism: String?, expiry: String?, passwordCheck: String?) {
        guard let userAgentID, !userAgentID.isEmpty else { return nil }
        self.userAgentID = userAgentID
        if let token, let mechanism, let expiry = expiry.flatMap(StorageTimestamp.date), let passwordCheck {
            self.token = Token(secret: token, mechanism: mechanism, expiry: expiry, passwordCheck: passwordCheck)
        }
    }

    package var description: String {
        "StoredLogin(userAgentID: \(self.userAgentID), token: \(self.token.map { "\($0.mechanism) until \(StorageTimestamp.text($0.expiry))" } ?? "none"))"
    }

    package var customMirror: Mirror {
        Mirror(self, children: ["userAgentID": self.userAgentID, "hasToken": self.token != nil], displayStyle: .struct)
    }
}
