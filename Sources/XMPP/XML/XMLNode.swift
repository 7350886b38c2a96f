/// A child of an ``XMLElement``: an element or character data.
public enum XMLNode: Hashable, Sendable {
    case element(XMLElement)
    case text(String)
}
