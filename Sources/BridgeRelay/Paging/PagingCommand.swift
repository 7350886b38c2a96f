/// What a paged recipient wrote, as a command (issue 24): `ack`, `silence 2h`,
/// `unsilence ID`, or words the bridge answers with a help line. Parsing only.
package enum PagingCommand: Hashable, Sendable {
    case ack
    case silence(Duration)
    case unsilence(id: String)
    /// Not a command: the text, trimmed.
    case unknown(String)

    /// The one-line help for words that are no command.
    package static let help = "Commands: ack · silence 2h (30m, 1d) · unsilence ID — or reply to the alert, or react to it."

    /// The longest silence asked for from a phone.
    package static let longestSilence: Duration = .seconds(30 * 86_400)

    package init(_ text: String) {
        let words = text.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        switch words.first {
        case let word? where words.count == 1 && ["ack", "acknowledge", "ok", "👍"].contains(word):
            self = .ack
        case "silence" where words.count == 2:
            if let duration = Self.duration(words[1]) {
                self = .silence(duration)
            } else {
                self = .unknown(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        case "unsilence" where words.count == 2:
            let id = text.split(whereSeparator: \.isWhitespace)[1]
            self = .unsilence(id: String(id))
        default:
            self = .unknown(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// "90s", "30m", "2h", "1d", "1h30m": at most 30 days, at least a minute.
    package static func duration(_ text: String) -> Duration? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var total: Int64 = 0
        var number: Int64?
        for character in text {
            if let digit = character.wholeNumberValue {
                guard (number ?? 0) < 1_000_000 else { return nil }
                number = (number ?? 0) * 10 + Int64(digit)
            } else if let unit = units[character], let value = number {
                total += value * unit
                number = nil
            } else {
                return nil
            }
        }
        guard number == nil, total >= 60, total <= Self.longestSilence.components.seconds else { return nil }
        return .seconds(total)
    }
}
