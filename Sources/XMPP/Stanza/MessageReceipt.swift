/// Receipts that a message reached its recipient's client: delivery receipts
/// (XEP-0184) and chat markers (XEP-0333), with the hints that ask for them and ask the
/// server to keep the message for an offline client (XEP-0334 §4.4).
public struct MessageReceipt: Hashable, Sendable {
    public static let receiptsNamespace = "urn:xmpp:receipts"
    public static let markersNamespace = "urn:xmpp:chat-markers:0"

    /// The id of the message the receipt is for.
    public var id: String
    /// A displayed marker (XEP-0333 §4); else a delivery receipt (XEP-0184 §5.2).
    public var displayed: Bool

    public init(id: String, displayed: Bool) {
        self.id = id
        self.displayed = displayed
    }

    /// The receipt `message` carries: a bodyless 1:1 message (chat, normal, headline)
    /// with `<received id/>` or `<displayed id/>`. Nil for anything else, and for room
    /// messages, where a marker speaks for an occupant, not for the recipient of a 1:1 copy.
    public static func of(_ message: Message) -> MessageReceipt? {
        guard message.type != .groupchat, message.type != .error, message.body == nil else { return nil }
        for element in message.extensions {
            let displayed: Bool
            switch (element.name, element.namespace) {
            case ("received", Self.receiptsNamespace): displayed = false
            case ("displayed", Self.markersNamespace): displayed = true
            default: continue
            }
            guard let id = element[attribute: "id"], !id.isEmpty else { continue }
            return MessageReceipt(id: id, displayed: displayed)
        }
        return nil
    }

    /// What a sender adds to a message it wants receipts for and kept for an offline phone:
    /// a receipt request (XEP-0184 §5.1), `<markable/>` (XEP-0333 §4) and a store hint
    /// (XEP-0334 §4.4).
    public static let requests = [
        XMLElement(name: "request", namespace: Self.receiptsNamespace),
        XMLElement(name: "markable", namespace: Self.markersNamespace),
        XMLElement(name: "store", namespace: "urn:xmpp:hints"),
    ]
}
