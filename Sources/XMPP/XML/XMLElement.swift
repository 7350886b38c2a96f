/// One XML element with its namespace, attributes and children: the tree form of a
/// stanza or nonza (RFC 6120 §4.1, §8).
///
/// Elements are values. Unknown children are kept as they were parsed so that a
/// relayed stanza loses nothing. The namespace is the resolved namespace URI;
/// prefixes of element names are not kept (a prefixed element is written back with a
/// default-namespace declaration, which is the same element in XML Namespaces terms).
public struct XMLElement: Hashable, Sendable {
    /// The local name, e.g. `message`.
    public var name: String
    /// The namespace URI, e.g. `jabber:client`; empty for no namespace.
    public var namespace: String
    /// Attributes in document order. Prefixed names (`xml:lang`) are kept qualified.
    public var attributes: [XMLAttribute]
    /// Child elements and text, in document order.
    public var children: [XMLNode]

    public init(
        name: String,
        namespace: String,
        attributes: [XMLAttribute] = [],
        children: [XMLNode] = []
    ) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.children = children
    }

    /// The value of the attribute with this qualified name, if present.
    public subscript(attribute name: String) -> String? {
        get { self.attributes.first(where: { $0.name == name })?.value }
        set {
            if let index = self.attributes.firstIndex(where: { $0.name == name }) {
                if let newValue {
                    self.attributes[index].value = newValue
                } else {
                    self.attributes.remove(at: index)
                }
            } else if let newValue {
                self.attributes.append(XMLAttribute(name: name, value: newValue))
            }
        }
    }

    /// Child elements, skipping text.
    public var elements: [XMLElement] {
        self.children.compactMap {
            if case .element(let element) = $0 { return element }
            return nil
        }
    }

    /// The first child element with this name, in this namespace (or any when `nil`).
    public func firstChild(named name: String, namespace: String? = nil) -> XMLElement? {
        for child in self.children {
            if case .element(let element) = child, element.name == name,
                namespace == nil || element.namespace == namespace
            {
                return element
            }
        }
        return nil
    }

    /// All text directly inside this element, concatenated.
    public var text: String {
        var result = ""
        for child in self.children {
            if case .text(let text) = child { result += text }
        }
        return result
    }

    /// Appends a child element.
    public mutating func append(_ element: XMLElement) {
        self.children.append(.element(element))
    }

    /// Appends text, merging it with a preceding text node.
    public mutating func append(text: String) {
        if case .text(let previous) = self.children.last {
            self.children[self.children.count - 1] = .text(previous + text)
        } else {
            self.children.append(.text(text))
        }
    }
}
