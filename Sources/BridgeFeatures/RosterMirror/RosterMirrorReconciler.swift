import BridgeState
import XMPP

/// Decides the roster sets that make one mirror direction (source account → target
/// account) current: a three-way comparison of the source roster now, the target roster
/// now and the snapshot of the last reconciliation (issue 5, "Roster mirroring").
///
/// Pure: no I/O, no clock. The same function serves the start-up reconciliation after
/// downtime (many changes at once) and every roster push while running (one change).
///
/// Rules, per contact (bare JID):
/// - Only source items in at least one of `groups` are mirrored (`nil` mirrors all);
///   an item that leaves the filter is handled as removed from the source.
/// - **New** on the source (not in the snapshot): if the target has no item for it, it
///   is set (name and groups as on the source) and the mirror owns it; if the target
///   already has one, that item is the user's: it is recorded as not owned and never
///   set or removed.
/// - **Changed** on the source (name or set of groups differs from the snapshot): an
///   owned item is set to the new values, recreated if it was deleted on the target
///   (suppressed or not) — the source wins on the next source change. A not-owned item
///   is left alone.
/// - **Removed** from the source: an owned item still on the target is removed; the
///   contact leaves the snapshot either way.
/// - **Unchanged** on the source: nothing is set. An owned item the user deleted on the
///   target becomes suppressed (not recreated until the source item changes); one the
///   user edited on the target keeps the user's edit (no fighting the user). A
///   suppressed contact the user adds back on the target becomes not owned.
/// - The mirror never sets or removes a target item it does not own, except to create
///   a new one.
///
/// Applying the returned changes to the target and reconciling again with the returned
/// snapshot yields no changes (idempotence). The caller should store the snapshot only
/// once the target's server accepted the changes: an owned item whose set failed would otherwise
/// look deleted by hand and be suppressed.
///
/// A two-way mirror is two directions, A→B and B→A, each with its own snapshot. Each
/// direction passes the JIDs the opposite one owns (`RosterMirrorSnapshot.ownedJIDs`) as
/// `excluding`, so the copies A→B created on B are not mirrored back to A as new
/// contacts. Run one direction, apply its changes to the target roster, then run the
/// other on the updated roster: one round converges and the next yields no changes in
/// either direction. An edit of a mirrored copy (on the side the mirror wrote to) stays
/// on that side.
package struct RosterMirrorReconciler {
    /// The changes to apply to the target, in bare JID order, and the snapshot to store
    /// once they are applied.
    ///
    /// - Parameters:
    ///   - source: the source account's roster now.
    ///   - target: the target account's roster now.
    ///   - snapshot: this direction's snapshot from the last reconciliation (empty the
    ///     first time).
    ///   - groups: the groups filter; `nil` mirrors every item, an empty set none.
    ///   - excluding: canonical bare JIDs this direction must neither mirror nor change
    ///     (the opposite direction's owned contacts); their snapshot entries, if any, are
    ///     kept as they are.
    package static func reconcile(
        source: [RosterItem],
        target: [RosterItem],
        snapshot: RosterMirrorSnapshot,
        groups: Set<String>?,
        excluding: Set<String> = []
    ) -> (changes: [RosterMirrorChange], snapshot: RosterMirrorSnapshot) {
        let targetItems = Dictionary(
            target.map { (RosterMirrorSnapshot.key($0.jid), $0) }, uniquingKeysWith: { _, last in last }
        )
        var mirrored: [String: RosterItem] = [:]
        for item in source where Self.passes(item, groups: groups) {
            let key = RosterMirrorSnapshot.key(item.jid)
            if !excluding.contains(key) { mirrored[key] = item }
        }

        var next = RosterMirrorSnapshot()
        var changes: [String: RosterMirrorChange] = [:]

        for (key, entry) in snapshot.entries where mirrored[key] == nil {
            if excluding.contains(key) {
                next.entries[key] = entry
                continue
            }
            // Removed from the source, or no longer in the filter.
            switch entry.ownership {
            case .owned:
                if let existing = targetItems[key] { changes[key] = .remove(existing.jid.bare) }
            case .notOwned, .suppressed:
                break
            }
        }

        for (key, item) in mirrored {
            let existing = targetItems[key]
            guard let entry = snapshot.entries[key] else {
                // New on the source.
                if existing == nil {
                    changes[key] = .set(Self.mirrorItem(item))
                    next.entries[key] = RosterMirrorSnapshot.Entry(item, ownership: .owned)
                } else {
                    next.entries[key] = RosterMirrorSnapshot.Entry(item, ownership: .notOwned)
                }
                continue
            }
            let changed = !entry.matches(item)
            let ownership: RosterMirrorSnapshot.Ownership
            switch entry.ownership {
            case .notOwned:
                ownership = .notOwned
            case .owned:
                if changed {
                    if existing.map({ !Self.sameNameAndGroups($0, item) }) ?? true {
                        changes[key] = .set(Self.mirrorItem(item))
                    }
                    ownership = .owned
                } else {
                    // Unchanged: a missing item was deleted by hand; an edited one is the user's edit.
                    ownership = existing == nil ? .suppressed : .owned
                }
            case .suppressed:
                if existing != nil {
                    ownership = .notOwned
                } else if changed {
                    changes[key] = .set(Self.mirrorItem(item))
                    ownership = .owned
                } else {
                    ownership = .suppressed
                }
            }
            next.entries[key] = RosterMirrorSnapshot.Entry(item, ownership: ownership)
        }

        let ordered = changes.sorted { $0.key < $1.key }.map(\.value)
        return (ordered, next)
    }

    /// Whether `item` is in the groups filter: any item when there is none, else an item
    /// in at least one of the groups.
    package static func passes(_ item: RosterItem, groups: Set<String>?) -> Bool {
        guard let groups else { return true }
        return !groups.isDisjoint(with: item.groups)
    }

    /// The target item that mirrors `item`: its bare JID, name and groups only.
    private static func mirrorItem(_ item: RosterItem) -> RosterItem {
        RosterItem(jid: item.jid.bare, name: item.name, groups: item.groups)
    }

    /// Whether two items carry the same name and set of groups.
    private static func sameNameAndGroups(_ lhs: RosterItem, _ rhs: RosterItem) -> Bool {
        lhs.name == rhs.name && Set(lhs.groups) == Set(rhs.groups)
    }
}
