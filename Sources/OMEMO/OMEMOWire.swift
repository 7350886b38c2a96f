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

    /// A device or key id: a decimal 1 … 2³¹ − 1 (libomemo-c's ids are signed 32-bit).
    static func id(_ text: String?, _ what: String, in element: String) throws(OMEMOElementError) -> UInt32 {
        guard let text, let value = UInt32(text.trimmingCharacters(in: .whitespaces)), value > 0, value <= UInt32(Int32.max) else {
            throw OMEMOElementError(element, "\(what) \(text.map { "'\($0.prefix(20))'" } ?? "missing") is not an id from 1 to 2147483647")
        }
        return value
    }

    /// Bytes from base64, whitespace (the line breaks of folded values) passed over;
    /// `limit` bounds the decoded size. Any other character that is not base64 refuses it.
    static func bytes(_ text: String, _ what: String, in element: String, limit: Int) throws(OMEMOElementError) -> [UInt8] {
        var compact: [UInt8] = []
        compact.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            default: compact.append(byte)
            }
            guard compact.count <= (limit + 2) / 3 * 4 else { throw OMEMOElementError(element, "\(what) is longer than \(limit) bytes") }
        }
        guard let data = Data(base64Encoded: Data(compact)) else { throw OMEMOElementError(element, "\(what) is not base64") }
        return Array(data)
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
