/// JID escaping (XEP-0106 §3–§4): how an address that contains characters a localpart may
/// not hold (`@`, space, `/`, quotes…) is carried in one. A gateway's puppet JID is the
/// remote bare JID escaped as the localpart: `bob@home.example` on the gateway
/// `home.work.example` is `bob\40home.example@home.work.example`.
///
/// A backslash is escaped (`\5c`) only where it would start one of the ten escape
/// sequences (§4.2), so `a\b` stays as it is and `a\20b` (an already escaped space) becomes
/// `a\5c20b`; ``unescape(_:)`` reverses exactly that.
public enum JIDEscaping {
    /// The characters XEP-0106 escapes, and their sequences.
    private static let sequences: [(character: Character, code: String)] = [
        (" ", "20"), ("\"", "22"), ("&", "26"), ("'", "27"), ("/", "2f"),
        (":", "3a"), ("<", "3c"), (">", "3e"), ("@", "40"), ("\\", "5c"),
    ]

    /// `text` escaped to fit a localpart.
    public static func escape(_ text: String) -> String {
        let characters = Array(text)
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for (index, character) in characters.enumerated() {
            if character == "\\" {
                // Only a backslash that reads as an escape sequence is escaped.
                result += Self.code(at: index + 1, in: characters) != nil ? "\\5c" : "\\"
            } else if let sequence = Self.sequences.first(where: { $0.character == character }) {
                result += "\\" + sequence.code
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// The text an escaped localpart stands for; sequences other than the ten are kept as
    /// they are.
    public static func unescape(_ localpart: String) -> String {
        let characters = Array(localpart)
        var result = ""
        result.reserveCapacity(localpart.utf8.count)
        var index = 0
        while index < characters.count {
            if characters[index] == "\\", let character = Self.code(at: index + 1, in: characters) {
                result.append(character)
                index += 3
            } else {
                result.append(characters[index])
                index += 1
            }
        }
        return result
    }

    /// The character whose two-digit code starts at `index`, if one does (either case).
    private static func code(at index: Int, in characters: [Character]) -> Character? {
        guard index + 1 < characters.count else { return nil }
        let code = String(characters[index...index + 1]).lowercased()
        return Self.sequences.first(where: { $0.code == code })?.character
    }
}
