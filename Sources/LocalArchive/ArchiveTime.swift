import Foundation
import TransportCore

/// The times `history --since/--until` and `?since=` take (issue 25), pure: an age
/// (`90s`, `30m`, `2h`, `7d`, `2w`: that long before `now`), a date (`2026-11-26`, UTC
/// midnight), a date and time (`2026-11-26T10:00`, `2026-11-26 10:00:05`, UTC unless it
/// ends in `Z` or an offset such as `+01:00`), or seconds since 1970.
public enum ArchiveTime {
    public static func parse(_ text: String, now: Date) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if let unit = text.last, let count = Double(text.dropLast()), count >= 0, count.isFinite {
            let seconds: Double? =
                switch unit {
                case "s": 1
                case "m": 60
                case "h": 3600
                case "d": 86_400
                case "w": 604_800
                default: nil
                }
            // At most a thousand years back: anything further is a typo, not a time.
            if let seconds, count * seconds <= Self.farthest { return now.addingTimeInterval(-count * seconds) }
            if seconds != nil { return nil }
        }
        if text.allSatisfy(\.isNumber), let seconds = Double(text), seconds <= Self.farthest * 2 { return Date(timeIntervalSince1970: seconds) }
        return Self.dateTime(text)
    }

    /// A thousand years, in seconds: the longest age taken.
    static let farthest: Double = 1000 * 366 * 86_400

    /// `YYYY-MM-DD`, optionally `T` or a space and `HH:MM[:SS[.fff]]`, optionally `Z` or
    /// `±HH:MM` (UTC without): also how the state stores keep times (`StorageTimestamp`).
    public static func dateTime(_ text: String) -> Date? {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= scalars.count else { return nil }
            var value = 0
            for scalar in scalars[index..<(index + digits)] {
                guard scalar.properties.numericType == .decimal, let digit = Int(String(scalar)) else { return nil }
                value = value * 10 + digit
            }
            index += digits
            return value
        }
        func skip(_ character: Unicode.Scalar) -> Bool {
            guard index < scalars.count, scalars[index] == character else { return false }
            index += 1
            return true
        }
        guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2) else { return nil }
        var components = DateComponents(year: year, month: month, day: day, hour: 0, minute: 0, second: 0)
        var fraction = 0.0
        var offset = 0
        if skip("T") || skip(" ") {
            guard let hour = number(2), skip(":"), let minute = number(2) else { return nil }
            components.hour = hour
            components.minute = minute
            if skip(":") {
                guard let second = number(2) else { return nil }
                components.second = second
                if skip(".") {
                    var digits = ""
                    while index < scalars.count, scalars[index].properties.numericType == .decimal {
                        digits.unicodeScalars.append(scalars[index])
                        index += 1
                    }
                    guard !digits.isEmpty, let value = Double("0." + digits) else { return nil }
                    fraction = value
                }
            }
            if skip("Z") {
            } else if index < scalars.count, scalars[index] == "+" || scalars[index] == "-" {
                let sign = scalars[index] == "-" ? -1 : 1
                index += 1
                guard let hours = number(2), skip(":"), let minutes = number(2), hours < 24, minutes < 60 else { return nil }
                offset = sign * (hours * 3600 + minutes * 60)
            }
        }
        guard index == scalars.count, (1...12).contains(month), (1...31).contains(day), (0...23).contains(components.hour ?? 0),
            (0...59).contains(components.minute ?? 0), (0...60).contains(components.second ?? 0)
        else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else { return nil }
        return date.addingTimeInterval(fraction - Double(offset))
    }
}
