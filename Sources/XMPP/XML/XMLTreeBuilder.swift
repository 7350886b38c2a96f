/// Turns SAX2 events into ``XMLStreamEvent``s: depth 1 is the stream, depth 2 starts a
/// stanza, deeper elements are its children (RFC 6120 §4.1). Enforces the depth and
/// attribute limits of ``XMLStreamLimits`` and the rule that only whitespace may sit
/// between stanzas (RFC 6120 §4.6.1).
///
/// A value type driven by ``XMLStreamParser``; names arrive as pointers into libxml2's
/// name dictionary (plain `UInt8` strings), which are cached so equal names cost one
/// allocation per stream.
struct XMLTreeBuilder {
    enum Outcome {
        case proceed
        /// The stream header or whitespace between stanzas: a new stanza may start here.
        case boundary
        /// A first-level element is complete; the owner checks its size, then emits it.
        case completed(XMLElement)
        case failed(XMLStreamError)
    }

    let limits: XMLStreamLimits
    /// Events completed so far; the owner moves them out.
    var events: [XMLStreamEvent] = []
    private(set) var depth = 0
    private var stack: [XMLElement] = []
    /// Character data of the innermost open element, joined here as bytes because
    /// libxml2 splits text at every entity and every few hundred bytes.
    private var text: [UInt8] = []
    private var names = NameCache()
    /// The stream header's prefix and namespace declarations, as read: what a parser needs
    /// to read the stream's stanzas again from a new libxml2 context (``XMLStreamParser/trim()``).
    private(set) var streamHeader: StreamHeader?

    /// Whether the builder stands between two stanzas: inside the stream, no stanza open.
    var isBetweenStanzas: Bool { self.depth == 1 && self.stack.isEmpty }

    /// Elements read in `from` are given the namespace `to` (a component stream's
    /// `jabber:component:accept` read as `jabber:client`, XEP-0114 §3), so stanza code sees
    /// one namespace whatever stream carried the stanza.
    let namespaceAlias: (from: String, to: String)?

    init(limits: XMLStreamLimits, namespaceAlias: (from: String, to: String)? = nil) {
        self.limits = limits
        self.namespaceAlias = namespaceAlias
    }

    mutating func startElement(
        localname: UnsafePointer<UInt8>?,
        prefix: UnsafePointer<UInt8>?,
        uri: UnsafePointer<UInt8>?,
        namespaceCount: Int,
        namespaces: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
        attributeCount: Int,
        attributes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?
    ) -> Outcome {
        self.depth += 1
        if self.depth > self.limits.maxDepth {
            return .failed(XMLStreamError(.policyViolation, "elements nested deeper than \(self.limits.maxDepth)"))
        }
        if namespaceCount + attributeCount > self.limits.maxAttributes {
            return .failed(XMLStreamError(.policyViolation, "more than \(self.limits.maxAttributes) attributes"))
        }
        var element = XMLElement(name: self.names[localname], namespace: self.names[uri])
        if let alias = self.namespaceAlias, element.namespace == alias.from {
            element.namespace = alias.to
        }
        if namespaceCount + attributeCount > 0 {
            element.attributes.reserveCapacity(namespaceCount + attributeCount)
        }
        if let namespaces {
            for index in 0..<namespaceCount {
                // Default namespace declarations are implied by `namespace`.
                guard let prefix = namespaces[2 * index] else { continue }
                element.attributes.append(
                    XMLAttribute(name: "xmlns:" + self.names[prefix], value: self.names[namespaces[2 * index + 1]])
                )
            }
        }
        if let attributes {
            for index in 0..<attributeCount {
                let base = 5 * index
                var name = self.names[attributes[base]]
                if let prefix = attributes[base + 1] {
                    name = self.names[prefix] + ":" + name
                }
                var value = ""
                if let start = attributes[base + 3], let end = attributes[base + 4] {
                    value = Self.attributeValue(UnsafeBufferPointer(start: start, count: end - start))
                }
                element.attributes.append(XMLAttribute(name: name, value: value))
            }
        }
        if self.depth == 1 {
            guard element.name == "stream", element.namespace == XMPPNamespace.stream else {
                return .failed(XMLStreamError(.invalidNamespace, "stream root is {\(element.namespace)}\(element.name)"))
            }
            self.streamHeader = StreamHeader(
                prefix: prefix.map { self.names[$0] },
                declarations: (0..<namespaceCount).map { index in
                    (prefix: namespaces?[2 * index].map { self.names[$0] }, uri: self.names[namespaces?[2 * index + 1]])
                }
            )
            self.events.append(.streamOpened(attributes: element.attributes))
            return .boundary
        }
        self.flushText()
        self.stack.append(element)
        return .proceed
    }

    mutating func endElement() -> Outcome {
        self.depth -= 1
        if self.depth == 0 {
            self.events.append(.streamClosed)
            return .proceed
        }
        self.flushText()
        guard let finished = self.stack.popLast() else { return .proceed }
        if self.stack.isEmpty {
            return .completed(finished)
        }
        self.stack[self.stack.count - 1].append(finished)
        return .proceed
    }

    /// XML's whitespace (space, tab, line feed, carriage return): all that may stand
    /// between stanzas.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    mutating func characters(_ bytes: UnsafeBufferPointer<UInt8>) -> Outcome {
        if self.stack.isEmpty {
            // Between stanzas only whitespace (keepalives) may appear (RFC 6120 §4.6.1).
            guard bytes.allSatisfy(Self.isWhitespace) else {
                return .failed(XMLStreamError(.badFormat, "text outside of any stanza"))
            }
            return .boundary
        }
        self.text.append(contentsOf: bytes)
        return .proceed
    }

    private mutating func flushText() {
        guard !self.text.isEmpty, !self.stack.isEmpty else { return }
        self.stack[self.stack.count - 1].append(text: String(decoding: self.text, as: UTF8.self))
        self.text.removeAll(keepingCapacity: true)
    }

    /// Without entity substitution libxml2 hands over `&` in attribute values as the
    /// character reference `&#38;` (and only `&` that way), so that is undone here.
    private static func attributeValue(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let value = String(decoding: bytes, as: UTF8.self)
        guard bytes.contains(UInt8(ascii: "&")) else { return value }
        return value.replacing("&#38;", with: "&")
    }
}

extension XMLTreeBuilder {
    /// The stream element's prefix and the namespaces it declares (RFC 6120 §4.7, §4.8).
    struct StreamHeader: Equatable {
        var prefix: String?
        var declarations: [(prefix: String?, uri: String)]

        static func == (lhs: StreamHeader, rhs: StreamHeader) -> Bool {
            lhs.prefix == rhs.prefix && lhs.declarations.elementsEqual(rhs.declarations) { $0.prefix == $1.prefix && $0.uri == $1.uri }
        }

        /// A start tag that opens the same stream: the same prefix, the same declarations,
        /// no other attribute. Nil when a name or URI holds a character that would need
        /// escaping or that attribute values normalise (no stream seen in use does).
        var startTag: [UInt8]? {
            let names = [self.prefix].compactMap { $0 } + self.declarations.flatMap { [$0.prefix, $0.uri].compactMap { $0 } }
            // Characters written differently than read: markup, quotes, and whitespace and
            // controls, which attribute values normalise.
            let unsafe: [UInt8] = Array("<>&'\"".utf8)
            guard !names.contains(where: { $0.utf8.contains { $0 <= 0x20 || $0 == 0x7F || unsafe.contains($0) } }) else { return nil }
            var tag = "<" + (self.prefix.map { $0 + ":" } ?? "") + "stream"
            for declaration in self.declarations {
                tag += " xmlns" + (declaration.prefix.map { ":" + $0 } ?? "") + "='" + declaration.uri + "'"
            }
            return Array((tag + ">").utf8)
        }
    }

    /// A direct-mapped cache from libxml2's interned name pointers to Swift strings.
    /// Fixed size, so hostile input with endless new names cannot grow it.
    struct NameCache {
        // 64 slots: the names of one XMPP stream are few; a collision only costs a String.
        // Allocated at the first name, so a builder that reads nothing holds nothing.
        private static let size = 64
        private var keys: [UnsafeRawPointer?] = []
        private var values: [String] = []

        subscript(_ pointer: UnsafePointer<UInt8>?) -> String {
            mutating get {
                guard let pointer else { return "" }
                if self.keys.isEmpty {
                    self.keys = [UnsafeRawPointer?](repeating: nil, count: Self.size)
                    self.values = [String](repeating: "", count: Self.size)
                }
                let key = UnsafeRawPointer(pointer)
                let bits = UInt(bitPattern: key)
                let slot = Int((bits >> 3) ^ (bits >> 11)) & (Self.size - 1)
                if self.keys[slot] == key { return self.values[slot] }
                let value = String(cString: pointer)
                self.keys[slot] = key
                self.values[slot] = value
                return value
            }
        }
    }
}
