import Foundation

/// Base64 of SASL2's data elements (XEP-0388 §2.2): plain RFC 4648 base64, with no special
/// case for an empty payload (RFC 6120's `=`): empty data is an empty or absent element.
public enum SASL2Base64 {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// Decodes an element's character data; surrounding XML whitespace is ignored.
    public static func decode(_ text: String) throws(SASLError) -> [UInt8] {
        let trimmed = text.trimmingCharacters(in: .init(charactersIn: " \t\r\n"))
        guard !trimmed.isEmpty else { return [] }
        guard let data = Data(base64Encoded: trimmed) else { throw .invalidBase64 }
        return Array(data)
    }
}
