import Foundation

/// An avatar image as an account publishes it: XEP-0084 (User Avatar, §4.1 data and §4.2
/// metadata) and XEP-0054/XEP-0153 (the vCard's PHOTO and the presence photo hash). PNG
/// or JPEG, at most ``maximumBytes``; its id is the SHA-1 of its bytes in hex (XEP-0084
/// §4.2.1, XEP-0153 §4.1). Checked here once, from bytes only (no I/O).
public struct Avatar: Hashable, Sendable {
    /// Why bytes are no avatar.
    public enum Problem: Error, Hashable, Sendable, CustomStringConvertible {
        case empty
        case tooLarge(bytes: Int, limit: Int)
        case notPNGOrJPEG

        public var description: String {
            switch self {
            case .empty: "the file is empty"
            case .tooLarge(let bytes, let limit): "\(bytes) bytes, over the limit of \(limit) (64 KiB): servers refuse larger avatars; scale it down"
            case .notPNGOrJPEG: "not a PNG or JPEG image"
            }
        }
    }

    /// Largest avatar published (XEP-0084 §7 asks for small images; servers cap PEP items).
    public static let maximumBytes = 64 * 1024

    public let bytes: [UInt8]
    /// `image/png` or `image/jpeg`.
    public let type: String
    /// The SHA-1 of ``bytes``, lower-case hex.
    public let id: String
    /// Pixel size, when the header says it.
    public let width: Int?
    public let height: Int?

    public init(bytes: [UInt8]) throws(Problem) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= Self.maximumBytes else { throw .tooLarge(bytes: bytes.count, limit: Self.maximumBytes) }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self.type = "image/png"
            // The IHDR chunk comes first: width and height, big-endian, at bytes 16 and 20.
            (self.width, self.height) = bytes.count >= 24 ? (Self.uint32(bytes, 16), Self.uint32(bytes, 20)) : (nil, nil)
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self.type = "image/jpeg"
            (self.width, self.height) = Self.jpegSize(bytes) ?? (nil, nil)
        } else {
            throw .notPNGOrJPEG
        }
        self.bytes = bytes
        self.id = Self.id(of: bytes)
    }

    /// An image's id: the SHA-1 of its bytes, lower-case hex (XEP-0084 §4.2.1, XEP-0153 §4.1).
    static func id(of bytes: some Collection<UInt8>) -> String {
        OpenSSLCrypto.digest(.sha1, bytes).map { String(format: "%02x", $0) }.joined()
    }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> Int {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// A JPEG's size from its first start-of-frame marker; nil when none is found.
    private static func jpegSize(_ bytes: [UInt8]) -> (Int, Int)? {
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            // SOF0…SOF15, except DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                return (width, height)
            }
            guard length >= 2 else { return nil }
            index += 2 + length
        }
        return nil
    }
}
