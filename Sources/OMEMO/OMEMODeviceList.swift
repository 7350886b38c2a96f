import XMPP

/// An account's OMEMO devices as its PEP device list carries them (XEP-0384 v0.3 §4.2):
/// `<list xmlns='eu.siacs.conversations.axolotl'><device id='…'/>…</list>`.
public struct OMEMODeviceList: Hashable, Sendable {
    /// The device ids, ascending, each once.
    public private(set) var devices: [UInt32]

    public init(_ devices: some Sequence<UInt32>) {
        self.devices = Array(Set(devices)).sorted()
    }

    /// Reads a `<list/>`. Devices with an id that is not one are passed over (a peer's
    /// junk must not hide its good devices); more than `limit` devices refuse the list (a
    /// flood: each device would cost a bundle fetch and a session).
    public init(element: XMLElement, limit: Int) throws(OMEMOElementError) {
        guard element.name == "list", element.namespace == OMEMOWire.namespace else {
            throw OMEMOElementError("list", "expected <list xmlns='\(OMEMOWire.namespace)'>, got <\(element.name)>")
        }
        let entries = element.elements.filter { $0.name == "device" }
        guard entries.count <= limit else { throw OMEMOElementError("list", "\(entries.count) devices, more than the limit of \(limit)") }
        var ids: [UInt32] = []
        for entry in entries {
            if let id = try? OMEMOWire.id(entry[attribute: "id"], "device id", in: "list") { ids.append(id) }
        }
        self.init(ids)
    }

    /// Whether `device` is on the list.
    public func contains(_ device: UInt32) -> Bool {
        self.devices.contains(device)
    }

    /// The list with `device` on it (our own, put back when another client's update left
    /// it out).
    public func adding(_ device: UInt32) -> OMEMODeviceList {
        OMEMODeviceList(self.devices + [device])
    }

    /// The `<list/>` to publish.
    public var element: XMLElement {
        var list = XMLElement(name: "list", namespace: OMEMOWire.namespace)
        for device in self.devices {
            list.append(XMLElement(name: "device", namespace: OMEMOWire.namespace, attributes: [XMLAttribute(name: "id", value: String(device))]))
        }
        return list
    }
}
