import Foundation
import XMPP

/// OMEMO 0.3's namespace and PEP nodes (XEP-0384 v0.3 §4.2–4.3; what Conversations, Dino and
/// Gajim use), and the two field forms its elements share: device and key ids (decimal,
/// 1 … 2³¹ − 1) and binary values (base64, line breaks allowed: Conversations folds them).
public enum OMEMOWire {
    public static let namespace = "eu.siacs.conversations.axolotl"
    /// The PEP node of an account's device list.
    public static let deviceListNode = "eu.siacs.conversations.axolotl.devicelist"

    /// The PEP node of `device`'s bundle.
    public static func bundleNode(for device: UInt32) -> String {
        "eu.siacs.conversations.axolotl.bundles:\(device)"
    }

    /// A device or key id: a decimal 1 … 2³¹ − 1 (libomemo-c's ids are signed 32-bit),
    /// spaces around it allowed.
    static func id(_ text: String?, _ what: String, in element: String) throws(OMEMOElementError) -> UInt32 {
        guard let text, let value = Self.decimal(text.utf8), value > 0, value <= UInt32(Int32.max) else {
            throw OMEMOElementError(element, "\(what) \(text.map { "'\($0.prefix(20))'" } ?? "missing") is not an id from 1 to 2147483647")
        }
        return value
    }

    /// The digits of `text` between spaces, if that is all it holds and fits 32 bits.
    private static func decimal(_ text: String.UTF8View) -> UInt32? {
        var value: UInt32 = 0
        var digits = 0
        var ended = false
        for byte in text {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard !ended else { return nil }
                let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times.addingReportingOverflow(UInt32(byte - UInt8(ascii: "0")))
                guard !overflow, !carry else { return nil }
                value = sum
                digits += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if digits > 0 { ended = true }
            default:
                return nil
            }
        }
        return digits > 0 ? value : nil
    }

    /// Bytes from base64 (RFC 4648 §4, padded), whitespace (the line breaks of folded
    /// values) passed over; `limit` bounds the decoded size. Any other character that is
    /// not base64, or padding anywhere but at the end, refuses it.
    static func bytes(_ text: String, _ what: String, in element: String, limit: Int) throws(OMEMOElementError) -> [UInt8] {
        var text = text
        let decoded = text.withUTF8 { Self.decode($0, limit: limit) }
        switch decoded {
        case .success(let bytes): return bytes
        case .failure(.notBase64): throw OMEMOElementError(element, "\(what) is not base64")
        case .failure(.tooLong): throw OMEMOElementError(element, "\(what) is longer than \(limit) bytes")
        }
    }

    /// Why ``decode(_:limit:)`` refused its input.
    enum Base64Failure: Error {
        case notBase64
        case tooLong
    }

    /// What each byte is in base64: its value, or ``skip`` (whitespace), ``pad`` (`=`) or
    /// ``bad``.
    private static let sextets: [UInt8] = {
        var table = [UInt8](repeating: bad, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() { table[Int(byte)] = UInt8(index) }
        for byte in " \n\r\t".utf8 { table[Int(byte)] = skip }
        table[Int(UInt8(ascii: "="))] = pad
        return table
    }()
    private static let skip: UInt8 = 0x40
    private static let pad: UInt8 = 0x41
    private static let bad: UInt8 = 0xFF

    /// `input`'s bytes (at most `limit`), through the ``sextets`` table, one quantum of
    /// four characters at a time.
    private static func decode(_ input: UnsafeBufferPointer<UInt8>, limit: Int) -> Result<[UInt8], Base64Failure> {
        let capacity = min(max(0, limit), input.count / 4 * 3) + 3
        var failure: Base64Failure?
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            Self.sextets.withUnsafeBufferPointer { table in
                var quantum: UInt32 = 0
                var filled = 0
                var padding = 0
                for byte in input {
                    let value = table[Int(byte)]
                    if value < 64 {
                        guard padding == 0 else { return failure = .notBase64 }
                        quantum = quantum << 6 | UInt32(value)
                        filled += 1
                        guard filled == 4 else { continue }
                        guard count + 3 <= capacity else { return failure = .tooLong }
                        buffer[count] = UInt8(truncatingIfNeeded: quantum >> 16)
                        buffer[count + 1] = UInt8(truncatingIfNeeded: quantum >> 8)
                        buffer[count + 2] = UInt8(truncatingIfNeeded: quantum)
                        count += 3
                        filled = 0
                        quantum = 0
                    } else if value == Self.skip {
                        continue
                    } else if value == Self.pad {
                        // Only the last one or two of a quantum, and nothing after.
                        guard filled >= 2 else { return failure = .notBase64 }
                        padding += 1
                        filled += 1
                        guard filled == 4 else { continue }
                        let kept = 3 - padding
                        guard count + kept <= capacity else { return failure = .tooLong }
                        quantum <<= 6 * UInt32(padding)
                        buffer[count] = UInt8(truncatingIfNeeded: quantum >> 16)
                        if kept > 1 { buffer[count + 1] = UInt8(truncatingIfNeeded: quantum >> 8) }
                        count += kept
                        filled = 0
                        quantum = 0
                    } else {
                        return failure = .notBase64
                    }
                }
                if filled != 0 { failure = .notBase64 }
            }
        }
        if let failure { return .failure(failure) }
        return output.count <= limit ? .success(output) : .failure(.tooLong)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// `<name xmlns=namespace>text</name>`.
    static func child(_ name: String, text: String, attributes: [XMLAttribute] = []) -> XMLElement {
        var element = XMLElement(name: name, namespace: Self.namespace, attributes: attributes)
        element.append(text: text)
        return element
    }
}
