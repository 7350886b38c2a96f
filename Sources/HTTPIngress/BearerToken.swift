import TransportCore

/// The secret an HTTP client must show as `Authorization: Bearer <token>` (RFC 6750 §2.1).
/// Compared in constant time: how long a check takes says nothing about how much of a
/// guess was right.
public struct BearerToken: Sendable {
    private let bytes: [UInt8]

    public init(_ token: String) {
        self.bytes = Array(token.utf8)
    }

    /// Whether the `Authorization` header value carries this token. The scheme is matched
    /// without regard to case (RFC 7235 §2.1); the token exactly.
    public func accepts(authorization header: String?) -> Bool {
        // An empty token would match an empty offer: never accepted (configuration refuses it too).
        guard let header, !self.bytes.isEmpty else { return false }
        let scheme = "bearer "
        guard header.count > scheme.count, header.prefix(scheme.count).lowercased() == scheme else { return false }
        let offered = Array(header.utf8.dropFirst(scheme.count).drop(while: { $0 == UInt8(ascii: " ") }))
        return Self.equal(offered, self.bytes)
    }

    /// Compares every byte of the longer input whatever differs first; the lengths are
    /// folded into the result, not checked before.
    static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        var difference = UInt64(lhs.count ^ rhs.count)
        let count = max(lhs.count, rhs.count)
        for index in 0..<count {
            let left = index < lhs.count ? lhs[index] : 0
            let right = index < rhs.count ? rhs[index] : 0
            difference |= UInt64(left ^ right)
        }
        return difference == 0
    }
}
