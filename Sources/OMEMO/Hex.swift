/// Bytes as lower-case hex and back, for OMEMO's text forms: fingerprints (XEP-0384 v0.3)
/// and `aesgcm://` fragments (XEP-0454).
enum Hex {
    /// Two lower-case digits a byte.
    static func string(_ bytes: [UInt8]) -> String {
        bytes.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
    }

    /// The bytes of an even number of hex digits (either case); nil for anything else.
    static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard digits[index].isHexDigit, digits[index + 1].isHexDigit, let byte = UInt8(String(digits[index ... index + 1]), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}
