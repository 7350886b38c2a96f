import Foundation
import NIOConcurrencyHelpers

/// Shares one ``TLSContext`` (an OpenSSL `SSL_CTX`, RFC 7590) among all connections with
/// the same ``TLSConfiguration``. Building a context reads the trust store; where the
/// system certificate directory is not hashed that is the whole CA bundle, about 0.4 MB
/// and tens of milliseconds per context, so a bridge with many accounts (or one that
/// reconnects often) builds it once. An extra CA file is read again when it changes on
/// disk (size or modification time), so a renewed file takes effect at the next connect.
public final class TLSContextCache: Sendable {
    private let contexts = NIOLockedValueBox<[TLSConfiguration: (stamp: String?, context: TLSContext)]>([:])

    public init() {}

    /// The context for `configuration`, built on first use or when its CA file changed.
    public func context(for configuration: TLSConfiguration) throws(TLSError) -> TLSContext {
        let stamp = configuration.additionalTrustRootsFile.flatMap(Self.stamp)
        if let cached = self.contexts.withLockedValue({ $0[configuration] }), cached.stamp == stamp {
            return cached.context
        }
        // Built outside the lock: two first connects may both build one; either is fine.
        let context = try TLSContext(configuration: configuration)
        self.contexts.withLockedValue { $0[configuration] = (stamp, context) }
        return context
    }

    /// Size and modification time of `path`, or nil when it cannot be read.
    private static func stamp(_ path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? -1
        let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(size)@\(modified)"
    }
}
