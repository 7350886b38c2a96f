import Foundation

/// XMPP date-times (XEP-0082 §3.3, `CCYY-MM-DDThh:mm:ss[.sss]TZD`) read from the wire:
/// with or without fractional seconds (Prosody writes six digits, ejabberd none), with `Z`
/// or a `±hh:mm` offset.
public enum XMPPDateTime {
    /// The date, or nil when `text` is not an XEP-0082 date-time (or absurdly long).
    public static func parse(_ text: String) -> Date? {
        guard text.utf8.count <= 64 else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
