#if canImport(Glibc)
import Glibc
import LocalArchive
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import TransportCore

/// A `Date` as the state database stores it, `yyyy-MM-dd HH:mm:ss.SSS` in UTC (GRDB's own
/// format, to the nearest millisecond as its formatter rounds, so rows written either way
/// read back alike), made without `DateFormatter`: ICU
/// formatting was 4 % of the bridge's CPU on the relay path, two dates per delivery.
package enum StorageTimestamp {
    package static func text(_ date: Date) -> String {
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

    /// The time `text` holds (as ``text(_:)`` writes it, or GRDB), nil for anything else.
    package static func date(_ text: String) -> Date? {
        ArchiveTime.dateTime(text)
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
