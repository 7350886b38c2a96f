/// Text from a remote sender made safe for a terminal or a line-based reader: every
/// control character (C0, DEL, C1; ESC among them) is shown as an escape such as `\u{1B}`,
/// so a message can neither drive the terminal nor fake a line from someone else. Tabs
/// stay; line breaks become `newline` (one message stays one line).
public enum VisibleText {
    public static func escaped(_ text: String, newline: String = "\\n") -> String {
        // Most text has nothing to escape: no copy then.
        guard text.unicodeScalars.contains(where: Self.needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard Self.needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x0A: result += newline
            case 0x0D: result += "\\r"
            default: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: false
        case 0x00...0x1F, 0x7F...0x9F: true
        default: false
        }
    }
}
