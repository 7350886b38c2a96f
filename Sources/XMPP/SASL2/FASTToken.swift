import Foundation

/// A FAST token (XEP-0484 §3.3): the secret the server gave in `<success>`, when it
/// expires, and the hashed-token mechanism it was asked for (Prosody binds a token to
/// its mechanism). The secret is a credential: it never appears in a description, a
/// mirror or a log line.
public struct FASTToken: Hashable, Sendable, CustomStringConvertible, CustomReflectable {
    public var secret: String
    public var expiry: Date
    public var mechanism: HashedTokenMechanism

    public init(secret: String, expiry: Date, mechanism: HashedTokenMechanism) {
        self.secret = secret
        self.expiry = expiry
        self.mechanism = mechanism
    }

    /// Reads `<token xmlns='urn:xmpp:fast:0' expiry='…' token='…'/>`; nil when it lacks
    /// either attribute or the expiry is no XEP-0082 date-time (the login still stands;
    /// the token is not kept).
    public init?(_ element: XMLElement, mechanism: HashedTokenMechanism) {
        guard element.name == "token", element.namespace == XMPPNamespace.fast, let secret = element[attribute: "token"], !secret.isEmpty,
            let text = element[attribute: "expiry"], let expiry = XMPPDateTime.parse(text)
        else { return nil }
        self.init(secret: secret, expiry: expiry, mechanism: mechanism)
    }

    /// Whether to log in with it at `now`: not expired within `margin` (a login must not
    /// race the expiry).
    public func isUsable(at now: Date, margin: TimeInterval = 3600) -> Bool {
        self.expiry.timeIntervalSince(now) > margin
    }

    public var description: String {
        "FAST token for \(self.mechanism.rawValue), expires \(ISO8601DateFormatter().string(from: self.expiry))"
    }

    public var customMirror: Mirror {
        Mirror(self, children: ["mechanism": self.mechanism, "expiry": self.expiry], displayStyle: .struct)
    }
}
