import Foundation

/// Base64 encoding of the character data of XMPP SASL elements
/// (`<auth/>`, `<challenge/>`, `<response/>`, `<success/>`; RFC 6120 §6.4.2).
///
/// A zero-length payload is written as a single `=`; an element without
/// character data carries no payload. Both decode to an empty byte array.
public enum SASLBase64 {
    /// Encodes `bytes`, producing `=` for an empty payload (RFC 6120 §6.4.2).
    public static func encode(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "=" }
        return Data(bytes).base64EncodedString()
    }

    /// Decodes an element's character data. Accepts `=` and the empty string as
    /// an empty payload; surrounding XML whitespace is ignored, anything else
    /// must be canonical padded base64 (RFC 4648 §4).
    public static func decode(_ text: String) throws(SASLError) -> [UInt8] {
        let trimmed = text.trimmingCharacters(in: .init(charactersIn: " \t\r\n"))
        guard !trimmed.isEmpty, trimmed != "=" else { return [] }
        guard let data = Data(base64Encoded: trimmed) else {
            throw .invalidBase64
        }
        return Array(data)
    }
}
