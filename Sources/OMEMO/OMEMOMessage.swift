import XMPP

/// An OMEMO 0.3 message's shape around its `<encrypted/>` (XEP-0384 v0.3 §5): only the body
/// is encrypted; everything else (origin-id, receipt request, markers, store hint,
/// corrections, replies) stays outside, so receipts, archive look-ups and paging
/// acknowledgements work as for any message. The EME hint (XEP-0380 §3) and a fallback
/// body tell clients without OMEMO what they got; the store hint (XEP-0334) keeps a
/// message without a real body in the archive and offline storage.
public enum OMEMOMessage {
    /// What a client without OMEMO shows instead of the text.
    public static let fallbackBody = "[This message is OMEMO encrypted]"

    /// The `<encrypted/>` of `message`, if it has one.
    public static func encryptedElement(of message: Message) -> XMLElement? {
        message.extensions.first { $0.name == "encrypted" && $0.namespace == OMEMOWire.namespace }
    }

    /// `message` with its body replaced by `encrypted` (the body sealed), the fallback
    /// body, the EME hint and the store hint. A file's out-of-band URL (XEP-0066) goes: the
    /// link is the sealed body, as Conversations sends it.
    public static func sealed(_ message: Message, as encrypted: OMEMOEncrypted) -> Message {
        var sealed = message
        sealed.body = Self.fallbackBody
        sealed.extensions.removeAll { $0.name == "x" && $0.namespace == "jabber:x:oob" }
        sealed.extensions.append(encrypted.element)
        sealed.extensions.append(Self.encryptionHint)
        if !sealed.extensions.contains(where: { $0.name == "store" && $0.namespace == Self.hintsNamespace }) {
            sealed.extensions.append(XMLElement(name: "store", namespace: Self.hintsNamespace))
        }
        return sealed
    }

    /// A key transport to `to`: no body, only `encrypted` and the store hint (XEP-0384
    /// v0.3 §5: it moves the sessions on; clients send one to answer a key exchange).
    public static func keyTransport(to: JID, id: String, _ encrypted: OMEMOEncrypted) -> Message {
        var message = Message(type: .chat, to: to, id: id)
        message.extensions = [encrypted.element, XMLElement(name: "store", namespace: Self.hintsNamespace)]
        return message
    }

    /// `message` as if it had come unencrypted: `plaintext` as its body, the encryption
    /// and its hint gone.
    public static func opened(_ message: Message, plaintext: String) -> Message {
        var opened = message
        opened.body = plaintext
        opened.extensions.removeAll { element in
            (element.name == "encrypted" && element.namespace == OMEMOWire.namespace) || (element.name == "encryption" && element.namespace == Self.emeNamespace)
        }
        return opened
    }

    static let hintsNamespace = "urn:xmpp:hints"
    static let emeNamespace = "urn:xmpp:eme:0"

    static var encryptionHint: XMLElement {
        XMLElement(
            name: "encryption", namespace: Self.emeNamespace,
            attributes: [XMLAttribute(name: "namespace", value: OMEMOWire.namespace), XMLAttribute(name: "name", value: "OMEMO")]
        )
    }
}
