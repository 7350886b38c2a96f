/// End-to-end encryption a message is under, recognised by its payload element: OMEMO
/// (XEP-0384; the legacy `eu.siacs.conversations.axolotl` namespace Conversations and Monal
/// use, and `urn:xmpp:omemo:2`), OpenPGP for XMPP (XEP-0373 §4, `<openpgp/>`), legacy PGP
/// (XEP-0027, `<x xmlns='jabber:x:encrypted'/>`), or the announcement of XEP-0380 §2
/// (`<encryption namespace/>`). OTR has no element: its body starts with `?OTR`.
enum EncryptionKind {
    static let announcement = "urn:xmpp:eme:0"

    /// The encryption's name when `element` is an encrypted payload or an announcement of one.
    static func name(of element: XMLElement) -> String? {
        switch (element.name, element.namespace) {
        case ("encrypted", "eu.siacs.conversations.axolotl"), ("encrypted", "urn:xmpp:omemo:2"): "OMEMO"
        case ("openpgp", "urn:xmpp:openpgp:0"): "OpenPGP"
        case ("x", "jabber:x:encrypted"): "PGP"
        case ("encryption", Self.announcement): Self.announced(element[attribute: "namespace"] ?? "", name: element[attribute: "name"])
        default: nil
        }
    }

    /// The name for an XEP-0380 announcement's namespace (§4's table), else its own `name`.
    static func announced(_ namespace: String, name: String?) -> String {
        switch namespace {
        case "eu.siacs.conversations.axolotl", "urn:xmpp:omemo:1", "urn:xmpp:omemo:2": "OMEMO"
        case "urn:xmpp:openpgp:0": "OpenPGP"
        case "jabber:x:encrypted": "PGP"
        case "urn:xmpp:otr:0": "OTR"
        default: name.map { String($0.prefix(32)) } ?? "an unknown encryption"
        }
    }
}
