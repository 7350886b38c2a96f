#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A `Date` as the state database stores it, `yyyy-MM-dd HH:mm:ss.SSS` in UTC (GRDB's own
/// format, to the nearest millisecond as its formatter rounds, so rows written either way
/// read back alike), made without `DateFormatter`: ICU
/// formatting was 4 % of the bridge's CPU on the relay path, two dates per delivery.
enum StorageTimestamp {
    static func text(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        var milliseconds = Int(((interval - Double(seconds)) * 1000).rounded(.toNearestOrAwayFromZero))
        if milliseconds >= 1000 {
            seconds += 1
            milliseconds -= 1000
        }
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = ""
        text.reserveCapacity(23)
        Self.append(Int(parts.tm_year) + 1900, digits: 4, to: &text)
        text.append("-")
        Self.append(Int(parts.tm_mon) + 1, digits: 2, to: &text)
        text.append("-")
        Self.append(Int(parts.tm_mday), digits: 2, to: &text)
        text.append(" ")
        Self.append(Int(parts.tm_hour), digits: 2, to: &text)
        text.append(":")
        Self.append(Int(parts.tm_min), digits: 2, to: &text)
        text.append(":")
        Self.append(Int(parts.tm_sec), digits: 2, to: &text)
        text.append(".")
        Self.append(milliseconds, digits: 3, to: &text)
        return text
    }

    /// The time `text` holds (as ``text(_:)`` writes it, or GRDB: `YYYY-MM-DD HH:MM:SS`,
    /// optionally with a fraction of a second, a `T` allowed between date and time); nil for
    /// anything else.
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: " ") || bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var fraction = 0.0
        if bytes.count > 19 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 20, bytes.count <= 29, let digits = number(20..<bytes.count) else { return nil }
            fraction = Double(digits) / pow(10, Double(bytes.count - 20))
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: Double(timegm(&parts)) + fraction)
    }

    private static func append(_ value: Int, digits: Int, to text: inout String) {
        var divisor = 1
        for _ in 1..<digits { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            text.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + UInt8((rest / divisor) % 10)))
            rest %= divisor
            divisor /= 10
        }
    }
}
