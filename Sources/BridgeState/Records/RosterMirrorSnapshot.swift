/// What one mirror direction (source account → target account) knew after its last
/// reconciliation: the third side of the three-way comparison in `RosterMirrorReconciler`.
///
/// Keyed by the contact's bare JID in canonical form (`JID.bare.description`: localpart
/// and domainpart lower-cased by preparation, RFC 7622 §3.2–3.3). Stored as JSON per
/// mirror in `roster_mirror_snapshots` (see `RosterMirrorStore.swift`).
package struct RosterMirrorSnapshot: Hashable, Codable, Sendable {
    /// Who the target's item for a contact belongs to.
    package enum Ownership: String, Hashable, Codable, Sendable {
        /// The mirror created the target's item, so it updates and removes it.
        case owned
        /// The target already had an item for the contact when the source item first
        /// appeared (the user added it by hand, or the user re-added a suppressed one):
        /// the mirror never sets or removes it.
        case notOwned = "not-owned"
        /// The mirror created the item and the user deleted it on the target: it is not
        /// recreated until the source item's name or groups change.
        case suppressed

        /// Whether the mirror created the target's item (deleted since, or not).
        package var isMirrorCreated: Bool {
            switch self {
            case .owned, .suppressed: true
            case .notOwned: false
            }
        }
    }

    /// One mirrored contact.
    package struct Entry: Hashable, Codable, Sendable {
        /// The source item's name as last seen.
        package var name: String?
        /// The source item's groups as last seen, in the source's order.
        package var groups: [String]
        /// Who the target's item for this contact belongs to.
        package var ownership: Ownership

        package init(name: String? = nil, groups: [String], ownership: Ownership) {
            self.name = name
            self.groups = groups
            self.ownership = ownership
        }
    }

    /// The mirrored contacts, keyed by canonical bare JID.
    package var entries: [String: Entry]

    package init(entries: [String: Entry] = [:]) {
        self.entries = entries
    }

    /// The contacts whose target item this direction created (suppressed ones included).
    /// A two-way mirror passes this set as `excluding` to the opposite direction, so the
    /// copies one direction creates are not mirrored back as new contacts.
    package var ownedJIDs: Set<String> {
        Set(self.entries.filter { $0.value.ownership.isMirrorCreated }.keys)
    }
}
