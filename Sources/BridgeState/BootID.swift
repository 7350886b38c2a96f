#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The running kernel's boot id (Linux `/proc/sys/kernel/random/boot_id`): a stream ledger
/// written in another boot may have lost pages in the crash and is not trusted.
package struct BootID: Hashable, Sendable {
    /// 16 bytes, as two words.
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses the 36-character UUID form; nil if it is not one.
    package init?(uuid text: String) {
        let digits = text.filter { $0 != "-" && $0 != "\n" }
        guard digits.count == 32, digits.allSatisfy(\.isHexDigit) else { return nil }
        guard let high = UInt64(digits.prefix(16), radix: 16), let low = UInt64(digits.suffix(16), radix: 16) else { return nil }
        self.init(high: high, low: low)
    }

    package init(_ pointer: UnsafeRawPointer) {
        self.init(high: pointer.load(as: UInt64.self), low: pointer.load(fromByteOffset: 8, as: UInt64.self))
    }

    package func write(to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: self.high, as: UInt64.self)
        pointer.storeBytes(of: self.low, toByteOffset: 8, as: UInt64.self)
    }

    /// This boot's id; zero where the kernel does not say (a reboot then goes unnoticed).
    package static func current(path: String = "/proc/sys/kernel/random/boot_id") -> BootID {
        guard let file = fopen(path, "r") else { return BootID(high: 0, low: 0) }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return BootID(high: 0, low: 0) }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return BootID(uuid: text) ?? BootID(high: 0, low: 0)
    }
}
