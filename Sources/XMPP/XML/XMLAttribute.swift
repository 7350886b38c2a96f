/// An attribute of an ``XMLElement``; `name` is qualified (`xml:lang`, `xmlns:foo`).
public struct XMLAttribute: Hashable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
