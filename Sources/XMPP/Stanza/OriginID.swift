/// Unique and stable stanza ids (XEP-0359 §4): `<origin-id xmlns='urn:xmpp:sid:0' id='…'/>`,
/// the sender's own id for a message, which servers must not change. A message sent again
/// after a failure carries the same one, so receivers can tell it is the same message.
public enum OriginID {
    public static let namespace = "urn:xmpp:sid:0"

    public static func element(_ id: String) -> XMLElement {
        XMLElement(name: "origin-id", namespace: Self.namespace, attributes: [XMLAttribute(name: "id", value: id)])
    }

    /// The origin-id of `message`, if it has one.
    public static func of(_ message: Message) -> String? {
        message.extensions.first { $0.name == "origin-id" && $0.namespace == Self.namespace }?[attribute: "id"]
    }
}
