#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The running kernel's boot id (Linux `/proc/sys/kernel/random/boot_id`): a stream ledger
/// written in another boot may have lost pages in the crash and is not trusted.
struct BootID: Hashable, Sendable {
    /// 16 bytes, as two words.
    var high: UInt64
    var low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Parses the 36-character UUID form; nil if it is not one.
    init?(uuid text: String) {
        let digits = text.utf8.filter { $0 != UInt8(ascii: "-") && $0 != UInt8(ascii: "\n") }
        guard digits.count == 32 else { return nil }
        var words: [UInt64] = [0, 0]
        for (index, digit) in digits.enumerated() {
            guard let value = Self.hexValue(digit) else { return nil }
            words[index / 16] = words[index / 16] << 4 | UInt64(value)
        }
        self.init(high: words[0], low: words[1])
    }

    init(_ pointer: UnsafeRawPointer) {
        self.init(high: pointer.load(as: UInt64.self), low: pointer.load(fromByteOffset: 8, as: UInt64.self))
    }

    func write(to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: self.high, as: UInt64.self)
        pointer.storeBytes(of: self.low, toByteOffset: 8, as: UInt64.self)
    }

    /// This boot's id; zero where the kernel does not say (a reboot then goes unnoticed).
    static func current(path: String = "/proc/sys/kernel/random/boot_id") -> BootID {
        guard let file = fopen(path, "r") else { return BootID(high: 0, low: 0) }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return BootID(high: 0, low: 0) }
        return BootID(uuid: String(cString: buffer)) ?? BootID(high: 0, low: 0)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
