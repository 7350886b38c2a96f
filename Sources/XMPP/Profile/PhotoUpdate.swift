import Foundation

/// The vCard photo hash a presence advertises (XEP-0153 §3.2, `vcard-temp:x:update`):
/// written into our own presence and a puppet's, read from a contact's.
public enum PhotoUpdate {
    public static let namespace = "vcard-temp:x:update"

    /// `<x><photo>hash</photo></x>`; an empty `hash` says there is no photo.
    public static func element(hash: String) -> XMLElement {
        var photo = XMLElement(name: "photo", namespace: Self.namespace)
        if !hash.isEmpty { photo.append(text: hash) }
        var update = XMLElement(name: "x", namespace: Self.namespace)
        update.append(photo)
        return update
    }

    /// The hash `presence` advertises: nil when it says nothing (or something that is no
    /// SHA-1 in hex), empty when it says there is no photo.
    public static func hash(in presence: Presence) -> String? {
        guard let update = presence.extensions.first(where: { $0.name == "x" && $0.namespace == Self.namespace }),
            let photo = update.firstChild(named: "photo", namespace: Self.namespace)
        else { return nil }
        let hash = photo.text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        guard hash.isEmpty || (hash.count == 40 && hash.allSatisfy(\.isHexDigit)) else { return nil }
        return hash
    }
}
