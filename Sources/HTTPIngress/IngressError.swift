import Foundation
import TransportCore

/// A refused HTTP ingress request: the status code and a reason, answered as
/// `{"error": reason}`.
public struct IngressError: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    public var message: String

    public init(_ status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    public static func badRequest(_ message: String) -> Self { Self(400, message) }
    public static func unauthorized() -> Self { Self(401, "missing or wrong bearer token") }
    public static func notFound(_ message: String) -> Self { Self(404, message) }
    public static func methodNotAllowed(_ allowed: String) -> Self { Self(405, "method not allowed; use \(allowed)") }
    public static func tooLarge(limit: Int) -> Self { Self(413, "body over the limit of \(limit) bytes") }
    public static func unsupportedType(_ type: String) -> Self {
        Self(415, "content type \(type) not supported; send text/plain or application/json")
    }
    public static func unprocessable(_ message: String) -> Self { Self(422, message) }

    public var json: String { IngressJSON.encode(["error": self.message]) }
    public var description: String { "\(self.status) \(self.message)" }
}
