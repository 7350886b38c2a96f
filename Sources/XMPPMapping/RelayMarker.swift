import TransportCore
import XMPP

/// The element xmpp-bridge puts into every message it relays, naming the bridge, so any
/// bridge that sees it again does not relay it a second time (no loops, also across
/// chains of bridges). Unknown extensions are ignored by clients (RFC 6120 §8.4).
public enum RelayMarker {
    public static let namespace = "urn:xmpp-bridge:relay:0"

    public static func element(bridgeID: String) -> XMLElement {
        XMLElement(name: "relay", namespace: Self.namespace, attributes: [XMLAttribute(name: "by", value: bridgeID)])
    }

    /// The relaying bridge's id, if `message` carries the marker.
    public static func relayedBy(_ message: Message) -> String? {
        message.extensions.first { $0.name == "relay" && $0.namespace == Self.namespace }.map { $0[attribute: "by"] ?? "" }
    }
}
