import XMPP

/// OMEMO 0.3's PEP traffic (XEP-0384 v0.3 §4.2–4.3 over XEP-0163 and XEP-0060): the device
/// list and bundle published with an open access model (XEP-0060 §7.1.5 publish options:
/// contacts outside the roster must read them too), nodes fetched, and device list
/// notifications read. Builders and readers only: the account's session sends the IQs.
public enum OMEMOPubSub {
    static let namespace = PEPPublish.namespace
    static let eventNamespace = "http://jabber.org/protocol/pubsub#event"
    /// The caps feature that asks the server to push contacts' device lists (XEP-0163 §4).
    public static let notifyFeature = OMEMOWire.deviceListNode + "+notify"

    /// The `<pubsub/>` of an IQ set publishing our device list (item id `current`).
    public static func publish(_ list: OMEMODeviceList, openAccess: Bool = true) -> XMLElement {
        Self.publish(node: OMEMOWire.deviceListNode, item: "current", payload: list.element, openAccess: openAccess)
    }

    /// The `<pubsub/>` of an IQ set publishing `device`'s bundle.
    public static func publish(_ bundle: OMEMOBundle, device: UInt32, openAccess: Bool = true) -> XMLElement {
        Self.publish(node: OMEMOWire.bundleNode(for: device), item: "current", payload: bundle.element, openAccess: openAccess)
    }

    /// The `<pubsub/>` of an IQ get for the newest item of `node` (sent to the owner's bare JID).
    public static func fetch(node: String) -> XMLElement {
        var pubsub = XMLElement(name: "pubsub", namespace: Self.namespace)
        pubsub.append(XMLElement(name: "items", namespace: Self.namespace, attributes: [XMLAttribute(name: "node", value: node), XMLAttribute(name: "max_items", value: "1")]))
        return pubsub
    }

    /// The payload of the first item in a fetch's result (`<pubsub><items><item>payload`);
    /// nil when the node is empty.
    public static func payload(ofResult result: XMLElement?) -> XMLElement? {
        result?.firstChild(named: "items", namespace: Self.namespace)?.firstChild(named: "item", namespace: Self.namespace)?.elements.first
    }

    /// What a device list notification says (XEP-0163 §4.3).
    public enum DeviceListNotice: Hashable, Sendable {
        /// The list as published now.
        case list(XMLElement)
        /// The item was retracted or the node purged: no devices.
        case cleared
    }

    /// The device list notification in `message`; nil when it is none.
    public static func deviceListNotice(in message: Message) -> DeviceListNotice? {
        guard let event = message.extensions.first(where: { $0.name == "event" && $0.namespace == Self.eventNamespace }),
            let items = event.firstChild(named: "items", namespace: Self.eventNamespace), items[attribute: "node"] == OMEMOWire.deviceListNode
        else { return nil }
        guard let list = items.firstChild(named: "item", namespace: Self.eventNamespace)?.elements.first else { return .cleared }
        return .list(list)
    }

    private static func publish(node: String, item id: String, payload: XMLElement, openAccess: Bool) -> XMLElement {
        PEPPublish.element(node: node, id: id, payload: payload, options: openAccess ? [("pubsub#access_model", "open")] : [])
    }
}
