/// Recognises Message Carbons (XEP-0280) and refuses forged ones (XEP-0280 §11
/// "Security Considerations"; the CVE-2017-5589 family of client bugs).
///
/// A carbon is a message from the user's own server wrapping a copy of a message the
/// account received elsewhere (`<received/>`, XEP-0280 §7) or sent from another
/// resource (`<sent/>`, XEP-0280 §8), in a XEP-0297 `<forwarded/>`. Because the inner
/// message is taken as the account's own traffic, anyone who can get a wrapper
/// accepted can put words in the user's or a contact's mouth. So a wrapper is genuine
/// only when the outer `from` is exactly the account's bare JID: not absent, not a
/// contact, and not one of the account's own full JIDs (another resource could then
/// forge carbons for its siblings).
public enum CarbonFilter {
    /// The carbons namespace and disco feature (XEP-0280 §3).
    public static let namespace = "urn:xmpp:carbons:2"
    /// The feature a server lists in disco#info when it supports carbons (XEP-0280 §3).
    public static let feature = namespace
    /// The Stanza Forwarding namespace of the `<forwarded/>` wrapper (XEP-0297 §3).
    public static let forwardNamespace = "urn:xmpp:forward:0"

    /// What a message turned out to be.
    public enum Outcome: Hashable, Sendable {
        /// An ordinary message with no carbon wrapper; handle it as it is.
        case notCarbon
        /// A genuine copy of a message received by another resource; the associated
        /// value is the inner (original) message.
        case received(Message)
        /// A genuine copy of a message sent by another resource; the associated value is
        /// the inner (original) message.
        case sent(Message)
        /// A carbon wrapper that must be ignored (XEP-0280 §11): from anyone but the
        /// account's bare JID, or with a malformed inside. `from` is the outer sender.
        case forged(from: JID?)
    }

    /// The payload of the IQ set that enables carbons for this session (XEP-0280 §4).
    public static func enableRequest() -> XMLElement {
        XMLElement(name: "enable", namespace: Self.namespace)
    }

    /// The payload of the IQ set that disables carbons for this session (XEP-0280 §5).
    public static func disableRequest() -> XMLElement {
        XMLElement(name: "disable", namespace: Self.namespace)
    }

    /// Classifies `message`, received on the stream of the account `ownJID`.
    ///
    /// A message is a carbon when it has a `<received/>` or `<sent/>` child in the
    /// carbons namespace. It is genuine only when its `from` equals `ownJID.bare`, it
    /// has exactly one such child, that child holds exactly one `<forwarded/>` with
    /// exactly one `<message/>` in `jabber:client`, the inner message parses, and it is
    /// not itself a carbon wrapper. Anything else with a wrapper is `forged`.
    public static func classify(_ message: Message, ownJID: JID) -> Outcome {
        let wrappers = message.extensions.filter { Self.direction(of: $0) != nil }
        guard let wrapper = wrappers.first else { return .notCarbon }
        let forged = Outcome.forged(from: message.from)
        guard message.from == ownJID.bare, wrappers.count == 1, let direction = Self.direction(of: wrapper) else {
            return forged
        }
        let forwards = wrapper.elements.filter { $0.name == "forwarded" && $0.namespace == Self.forwardNamespace }
        guard forwards.count == 1 else { return forged }
        let inners = forwards[0].elements.filter { $0.name == "message" }
        guard inners.count == 1, let inner = try? Message(element: inners[0]) else { return forged }
        guard !inner.extensions.contains(where: { Self.direction(of: $0) != nil }) else { return forged }
        switch direction {
        case .received: return .received(inner)
        case .sent: return .sent(inner)
        }
    }

    private enum Direction {
        case received
        case sent
    }

    private static func direction(of element: XMLElement) -> Direction? {
        guard element.namespace == Self.namespace else { return nil }
        switch element.name {
        case "received": return .received
        case "sent": return .sent
        default: return nil
        }
    }
}
