/// A PEP publish (XEP-0163 §3 over XEP-0060 §7.1): the `<pubsub/>` of an IQ set to our own
/// bare JID, one item on one node, with publish options (§7.1.5) as a submitted data form
/// when given. The one builder for the profile's items and OMEMO's.
public enum PEPPublish {
    public static let namespace = "http://jabber.org/protocol/pubsub"

    /// `payload` as item `id` of `node`; `options`: publish options (field → value).
    public static func element(node: String, id: String, payload: XMLElement, options: [(String, String)] = []) -> XMLElement {
        var item = XMLElement(name: "item", namespace: Self.namespace, attributes: [XMLAttribute(name: "id", value: id)])
        item.append(payload)
        var publish = XMLElement(name: "publish", namespace: Self.namespace, attributes: [XMLAttribute(name: "node", value: node)])
        publish.append(item)
        var pubsub = XMLElement(name: "pubsub", namespace: Self.namespace)
        pubsub.append(publish)
        guard !options.isEmpty else { return pubsub }
        var form = XMLElement(name: "x", namespace: "jabber:x:data", attributes: [XMLAttribute(name: "type", value: "submit")])
        form.append(Self.field("FORM_TYPE", "http://jabber.org/protocol/pubsub#publish-options", hidden: true))
        for (name, value) in options { form.append(Self.field(name, value)) }
        var publishOptions = XMLElement(name: "publish-options", namespace: Self.namespace)
        publishOptions.append(form)
        pubsub.append(publishOptions)
        return pubsub
    }

    private static func field(_ name: String, _ value: String, hidden: Bool = false) -> XMLElement {
        var field = XMLElement(name: "field", namespace: "jabber:x:data", attributes: [XMLAttribute(name: "var", value: name)])
        if hidden { field[attribute: "type"] = "hidden" }
        var text = XMLElement(name: "value", namespace: "jabber:x:data")
        text.append(text: value)
        field.append(text)
        return field
    }
}
