import TransportCore
import XMPP

/// Splits a delivery whose stanza would exceed the target's stanza limit after XML escaping
/// (issue 8, "poison messages"): a 64 KiB line of `&` escapes to 320 KiB, which a server
/// answers with `policy-violation` and a closed stream. Parts break at line ends where they
/// can, else between characters; each part is its own delivery (its own relay id, queued
/// in order), prefixed `(k/n) `, and escapes to at most the limit with its envelope.
package enum DeliverySplitter {
    /// Room kept for the stanza around the body: element names, addresses, id, type,
    /// subject, relay marker and extensions.
    package static let envelopeBytes = 1_024

    /// `delivery` itself when it fits, else its parts in order.
    package static func split(_ delivery: Delivery, maxStanzaBytes: Int) -> [Delivery] {
        // A reply's quote goes in front of the body when it is sent (MessageContent.outgoing).
        let overhead = Self.envelopeBytes + Self.escapedSize(delivery.target.address ?? "") + Self.escapedSize(delivery.subject ?? "")
            + Self.escapedSize(delivery.content.replyFallback ?? "")
        // Room for the "(k/n) " prefix too.
        let budget = max(64, maxStanzaBytes - overhead - 16)
        guard Self.escapedSize(delivery.body) > budget else { return [delivery] }
        let parts = Self.pieces(of: delivery.body, budget: budget)
        return parts.enumerated().map { offset, text in
            var part = delivery
            part.body = "(\(offset + 1)/\(parts.count)) " + text
            part.originalBody = part.body
            part.relayID = "\(delivery.relayID)-\(offset + 1)"
            // A correction, reply or file applies to the first part; the rest are plain text.
            if offset > 0 {
                part.subject = nil
                part.content = MessageContent()
            }
            return part
        }
    }

    /// Bytes `text` takes as escaped XML character data (RFC 6120 §11.1; our serializer:
    /// `&` `<` `>` as entities, CR as `&#13;`, other C0 controls but tab and LF dropped).
    package static func escapedSize(_ text: String) -> Int {
        var size = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): size += 5
            case UInt8(ascii: "<"), UInt8(ascii: ">"): size += 4
            case 0x0D: size += 5
            case 0x09, 0x0A: size += 1
            case 0x00...0x1F: break
            default: size += 1
            }
        }
        return size
    }

    /// Pieces of at most `budget` escaped bytes: whole lines packed together, a longer line
    /// cut between characters.
    package static func pieces(of text: String, budget: Int) -> [String] {
        var pieces: [String] = []
        var current = ""
        var currentSize = 0
        func flush() {
            if !current.isEmpty { pieces.append(current) }
            current = ""
            currentSize = 0
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            let piece = index < lines.count - 1 ? line + "\n" : line
            let size = Self.escapedSize(String(piece))
            if currentSize + size <= budget {
                current += piece
                currentSize += size
                continue
            }
            flush()
            if size <= budget {
                current = String(piece)
                currentSize = size
                continue
            }
            for character in piece {
                let characterSize = Self.escapedSize(String(character))
                if currentSize + characterSize > budget { flush() }
                current.append(character)
                currentSize += characterSize
            }
        }
        flush()
        return pieces
    }
}
