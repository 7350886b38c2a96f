import Foundation

/// A member's quiet hours (issue 24, `quiet = { hours = "22:00-07:00", tz = "Europe/Berlin",
/// min_priority = 5 }`): deliveries below `min_priority` wait until the hours end; urgent
/// ones go at once. Hours may cross midnight; the time zone's daylight saving applies.
package struct QuietHours: Hashable, Sendable {
    /// Minutes after midnight, local time.
    package var start: Int
    package var end: Int
    package var timeZone: TimeZone
    package var minimumPriority: Int

    /// "22:00-07:00" → (1320, 420); nil when not two `HH:MM` times apart.
    package static func parse(hours text: String) -> (start: Int, end: Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]), start != end else { return nil }
        return (start, end)
    }

    private static func minutes(_ text: String) -> Int? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 2, fields.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) }),
            let hour = Int(fields[0]), let minute = Int(fields[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return hour * 60 + minute
    }

    /// Whether `date` falls in the hours.
    package func isQuiet(at date: Date) -> Bool {
        let now = self.minuteOfDay(date)
        return self.start < self.end ? (self.start <= now && now < self.end) : (now >= self.start || now < self.end)
    }

    /// When the quiet hours that hold at `date` end (the next local `end` time after it).
    package func end(after date: Date) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = self.timeZone
        let components = DateComponents(hour: self.end / 60, minute: self.end % 60, second: 0)
        return calendar.nextDate(after: date, matching: components, matchingPolicy: .nextTime) ?? date.addingTimeInterval(3600)
    }

    /// Whether a delivery of `priority` at `date` waits, and until when.
    package func postponement(priority: Int, at date: Date) -> Date? {
        guard priority < self.minimumPriority, self.isQuiet(at: date) else { return nil }
        return self.end(after: date)
    }

    private func minuteOfDay(_ date: Date) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = self.timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }

    package init(start: Int, end: Int, timeZone: TimeZone, minimumPriority: Int) {
        self.start = start
        self.end = end
        self.timeZone = timeZone
        self.minimumPriority = minimumPriority
    }
}
