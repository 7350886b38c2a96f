import Foundation

/// What an account shows about itself (issue 25): its nick and avatar, published as a
/// vCard (XEP-0054 §3: FN, NICKNAME, PHOTO), as PEP items (XEP-0084 §4.1 avatar data,
/// §4.2 metadata; XEP-0172 §4.5 nick), as the presence photo hash (XEP-0153 §3.2) and as
/// the nick in messages (XEP-0172 §4.2). Pure: the session sends what this builds.
public struct OwnProfile: Hashable, Sendable {
    public var nick: String?
    public var avatar: Avatar?

    public init(nick: String? = nil, avatar: Avatar? = nil) {
        self.nick = nick
        self.avatar = avatar
    }

    public var isEmpty: Bool { self.nick == nil && self.avatar == nil }

    public static let vCardNamespace = "vcard-temp"
    public static let nickNamespace = "http://jabber.org/protocol/nick"
    public static let avatarDataNamespace = "urn:xmpp:avatar:data"
    public static let avatarMetadataNamespace = "urn:xmpp:avatar:metadata"

    /// Whether the server's vCard (nil: none) already shows this profile: the nick as FN
    /// and NICKNAME, the avatar as PHOTO (by hash and type).
    public func isShown(in vCard: XMLElement?) -> Bool {
        let shown = vCard.map(VCardSummary.init) ?? VCardSummary()
        if let nick, shown.nick != nick || shown.fullName != nick { return false }
        if let avatar, shown.photoHash != avatar.id || shown.photoType != avatar.type { return false }
        return true
    }

    /// `vCard` (the server's; nil: none) with this profile's fields set; everything else in
    /// it is kept (a vCard set replaces the whole card, XEP-0054 §3.2).
    public func vCard(updating vCard: XMLElement?) -> XMLElement {
        var card = vCard ?? XMLElement(name: "vCard", namespace: Self.vCardNamespace)
        var replaced: Set<String> = []
        if self.nick != nil { replaced.formUnion(["FN", "NICKNAME"]) }
        if self.avatar != nil { replaced.insert("PHOTO") }
        card.children.removeAll { node in
            if case .element(let element) = node { return replaced.contains(element.name) }
            return false
        }
        let namespace = card.namespace
        func field(_ name: String, _ value: String) -> XMLElement {
            var element = XMLElement(name: name, namespace: namespace)
            element.append(text: value)
            return element
        }
        if let nick {
            card.append(field("FN", nick))
            card.append(field("NICKNAME", nick))
        }
        if let avatar {
            var photo = XMLElement(name: "PHOTO", namespace: namespace)
            photo.append(field("TYPE", avatar.type))
            photo.append(field("BINVAL", Data(avatar.bytes).base64EncodedString()))
            card.append(photo)
        }
        return card
    }

    /// The PEP publishes, in order (XEP-0084 §4.3: data before metadata): each a
    /// `<pubsub/>` payload for an IQ set to our own bare JID.
    public var pepPublishes: [XMLElement] {
        var publishes: [XMLElement] = []
        if let avatar {
            var data = XMLElement(name: "data", namespace: Self.avatarDataNamespace)
            data.append(text: Data(avatar.bytes).base64EncodedString())
            publishes.append(PEPPublish.element(node: Self.avatarDataNamespace, id: avatar.id, payload: data))
            var info = XMLElement(
                name: "info", namespace: Self.avatarMetadataNamespace,
                attributes: [XMLAttribute(name: "bytes", value: "\(avatar.bytes.count)"), XMLAttribute(name: "id", value: avatar.id), XMLAttribute(name: "type", value: avatar.type)]
            )
            if let width = avatar.width, let height = avatar.height {
                info[attribute: "width"] = "\(width)"
                info[attribute: "height"] = "\(height)"
            }
            var metadata = XMLElement(name: "metadata", namespace: Self.avatarMetadataNamespace)
            metadata.append(info)
            publishes.append(PEPPublish.element(node: Self.avatarMetadataNamespace, id: avatar.id, payload: metadata))
        }
        if let nickElement = self.nickElement {
            publishes.append(PEPPublish.element(node: Self.nickNamespace, id: "current", payload: nickElement))
        }
        return publishes
    }

    /// XEP-0153 §3.2: the avatar's hash in every presence; nil without an avatar (we then
    /// say nothing about the vCard's photo, which we do not manage).
    public var presenceUpdate: XMLElement? {
        self.avatar.map { PhotoUpdate.element(hash: $0.id) }
    }

    /// XEP-0172 §4.2: the nick, in messages the account sends.
    public var nickElement: XMLElement? {
        guard let nick else { return nil }
        var element = XMLElement(name: "nick", namespace: Self.nickNamespace)
        element.append(text: nick)
        return element
    }

    /// The XEP-0172 nick a stanza carries, if any.
    public static func nick(in extensions: [XMLElement]) -> String? {
        guard let element = extensions.first(where: { $0.name == "nick" && $0.namespace == Self.nickNamespace }) else { return nil }
        let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
