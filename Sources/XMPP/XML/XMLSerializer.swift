import NIOCore

/// Writes ``XMLElement`` trees and stream headers as UTF-8 XML (RFC 6120 §11).
///
/// Text and attribute values are escaped. Characters XML 1.0 forbids (C0 controls
/// other than tab, line feed and carriage return, and U+FFFE/U+FFFF) are **dropped**
/// from user text, so terminal output with escape codes never breaks the stream.
/// Carriage returns, line feeds and tabs in attributes are written as character
/// references so they survive attribute-value normalisation.
public enum XMLSerializer {
    /// Serialises `element` into `buffer`. `parentNamespace` is the default namespace in
    /// scope where the element is written (`jabber:client` for stanzas in a client stream);
    /// an `xmlns` declaration is written only where the namespace changes.
    public static func write(_ element: XMLElement, parentNamespace: String?, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("<")
        buffer.writeString(element.name)
        if element.namespace != parentNamespace {
            buffer.writeStaticString(" xmlns=\"")
            self.writeEscaped(element.namespace, inAttribute: true, into: &buffer)
            buffer.writeStaticString("\"")
        }
        for attribute in element.attributes where attribute.name != "xmlns" {
            buffer.writeStaticString(" ")
            buffer.writeString(attribute.name)
            buffer.writeStaticString("=\"")
            self.writeEscaped(attribute.value, inAttribute: true, into: &buffer)
            buffer.writeStaticString("\"")
        }
        if element.children.isEmpty {
            buffer.writeStaticString("/>")
            return
        }
        buffer.writeStaticString(">")
        for child in element.children {
            switch child {
            case .element(let childElement):
                self.write(childElement, parentNamespace: element.namespace, into: &buffer)
            case .text(let text):
                self.writeEscaped(text, inAttribute: false, into: &buffer)
            }
        }
        buffer.writeStaticString("</")
        buffer.writeString(element.name)
        buffer.writeStaticString(">")
    }

    /// Serialises `element` to a `String` (for logs and tests).
    public static func string(_ element: XMLElement, parentNamespace: String? = nil) -> String {
        var buffer = ByteBufferAllocator().buffer(capacity: 256)
        self.write(element, parentNamespace: parentNamespace, into: &buffer)
        return buffer.readString(length: buffer.readableBytes) ?? ""
    }

    /// Writes the opening of a client stream (RFC 6120 §4.7): XML declaration and
    /// `<stream:stream>` with `to`, `version='1.0'` and `xml:lang`; `from` only when given.
    public static func writeStreamHeader(
        to: String,
        from: String?,
        language: String,
        contentNamespace: String,
        into buffer: inout ByteBuffer
    ) {
        buffer.writeStaticString("<?xml version='1.0'?><stream:stream xmlns=\"")
        self.writeEscaped(contentNamespace, inAttribute: true, into: &buffer)
        buffer.writeStaticString("\" xmlns:stream=\"http://etherx.jabber.org/streams\" to=\"")
        self.writeEscaped(to, inAttribute: true, into: &buffer)
        if let from {
            buffer.writeStaticString("\" from=\"")
            self.writeEscaped(from, inAttribute: true, into: &buffer)
        }
        buffer.writeStaticString("\" version=\"1.0\" xml:lang=\"")
        self.writeEscaped(language, inAttribute: true, into: &buffer)
        buffer.writeStaticString("\">")
    }

    /// Writes a component's stream header (XEP-0114 §3): no `version`, so the server
    /// answers with the stream id and no features, and expects the handshake.
    public static func writeComponentStreamHeader(to domain: String, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("<?xml version='1.0'?><stream:stream xmlns=\"jabber:component:accept\" xmlns:stream=\"http://etherx.jabber.org/streams\" to=\"")
        self.writeEscaped(domain, inAttribute: true, into: &buffer)
        buffer.writeStaticString("\">")
    }

    /// Writes `<stream:error>` with `condition`, then the stream's closing tag (RFC 6120
    /// §4.9.1.1), with the stream prefix the header declared.
    public static func writeStreamError(_ condition: StreamErrorCondition, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("<stream:error>")
        self.write(XMLElement(name: condition.rawValue, namespace: XMPPNamespace.streamErrors), parentNamespace: XMPPNamespace.client, into: &buffer)
        buffer.writeStaticString("</stream:error>")
        self.writeStreamClose(into: &buffer)
    }

    /// Writes the closing tag of the stream (RFC 6120 §4.4).
    public static func writeStreamClose(into buffer: inout ByteBuffer) {
        buffer.writeStaticString("</stream:stream>")
    }

    /// Writes `text` escaped for element content or a double-quoted attribute value.
    public static func writeEscaped(_ text: String, inAttribute: Bool, into buffer: inout ByteBuffer) {
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            var index = 0
            let count = bytes.count
            while index < count {
                let byte = bytes[index]
                let replacement: StaticString?
                var skip = 1
                switch byte {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case UInt8(ascii: "\"") where inAttribute: replacement = "&quot;"
                case UInt8(ascii: "'") where inAttribute: replacement = "&apos;"
                case 0x09 where inAttribute: replacement = "&#9;"
                case 0x0A where inAttribute: replacement = "&#10;"
                case 0x0D: replacement = "&#13;"
                case 0x09, 0x0A: replacement = nil
                case 0x00...0x1F: replacement = ""
                case 0xEF where index + 2 < count && bytes[index + 1] == 0xBF && bytes[index + 2] >= 0xBE:
                    // U+FFFE and U+FFFF are not XML characters.
                    replacement = ""
                    skip = 3
                default: replacement = nil
                }
                if let replacement {
                    if runStart < index {
                        buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart..<index])))
                    }
                    buffer.writeStaticString(replacement)
                    index += skip
                    runStart = index
                } else {
                    index += 1
                }
            }
            if runStart < count {
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart..<count])))
            }
        }
    }
}
