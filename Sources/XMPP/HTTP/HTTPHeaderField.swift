/// One HTTP header field, name and value (RFC 9110 §5).
public struct HTTPHeaderField: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Whether `name` is a field name (a token, RFC 9110 §5.1, §5.6.2).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256 && name.utf8.allSatisfy(Self.isTokenByte)
    }

    /// Whether `value` may be sent as a field value (RFC 9110 §5.5): no control
    /// characters but horizontal tab, so no CR or LF that could start another field.
    public static func isValidValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// `name: value`, with the value of credentials (`Authorization`, `Cookie`) hidden.
    public var description: String {
        switch self.name.lowercased() {
        case "authorization", "cookie", "proxy-authorization": "\(self.name): <redacted>"
        default: "\(self.name): \(self.value)"
        }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
