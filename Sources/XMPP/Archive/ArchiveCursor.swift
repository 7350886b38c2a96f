import Foundation
import StanzaIdentity

/// Where catching up from the account's message archive (XEP-0313) starts: after an archive
/// id (the server's `stanza-id`, XEP-0359 §5), or — when the archive held nothing yet — at a
/// point in time.
///
/// Everything in the archive up to the cursor has been handled; a catch-up relays what
/// follows it. Its string form (``description``, ``init(_:)``) is how owners persist it.
public enum ArchiveCursor: Hashable, Sendable, CustomStringConvertible {
    /// After this stanza-id (the archive's id for a message).
    case after(StanzaID)
    /// From this moment on (an archive that was empty when first looked at).
    case since(Date)

    public var description: String {
        switch self {
        case .after(let id): "id:\(id)"
        case .since(let date): "since:\(Int64((date.timeIntervalSince1970 * 1000).rounded()))"
        }
    }

    /// Reads a cursor written by ``description``; nil for anything else.
    public init?(_ text: String) {
        if text.hasPrefix("id:") {
            let id = String(text.dropFirst(3))
            guard !id.isEmpty else { return nil }
            self = .after(StanzaID(id))
        } else if text.hasPrefix("since:"), let milliseconds = Int64(text.dropFirst(6)) {
            self = .since(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        } else {
            return nil
        }
    }
}
