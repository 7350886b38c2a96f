import Foundation
import GRDB
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeFeatures
@testable import BridgeState

/// Roster mirroring: the three-way reconciliation of source, target and snapshot (add,
/// rename, regroup and remove online and while offline, hand-added items kept, hand
/// deletions respected, the groups filter, idempotence, two-way convergence) and the
/// stored snapshot (issue 5, "Roster mirroring" and its pure tests).
@Suite("RosterMirrorReconciler")
struct RosterMirrorReconcilerTests {
    // MARK: - Source changes, online

    @Test("a new source contact is created on the target and owned")
    func newContactCreated() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        let changes = mirror.run(source: [try item("alice@a.example", "Alice", ["Friends"])], target: &target)

        #expect(changes == [.set(try item("alice@a.example", "Alice", ["Friends"]))])
        #expect(target == [try item("alice@a.example", "Alice", ["Friends"])])
        #expect(mirror.snapshot.entries["alice@a.example"] == entry("Alice", ["Friends"], .owned))
        #expect(mirror.snapshot.ownedJIDs == ["alice@a.example"])
    }

    @Test("a set carries only jid, name and groups, never the source's subscription")
    func setCarriesNoSubscription() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        let source = [RosterItem(jid: try JID("alice@a.example"), name: "Alice", subscription: .both, askSubscribe: true)]
        #expect(mirror.run(source: source, target: &target) == [.set(try item("alice@a.example", "Alice"))])
    }

    @Test("rename, regroup and removal on the source follow one at a time")
    func onlineChanges() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        var source = [try item("alice@a.example", "Alice", ["Friends"])]
        _ = mirror.run(source: source, target: &target)

        source[0].name = "Alice Liddell"
        #expect(mirror.run(source: source, target: &target) == [.set(try item("alice@a.example", "Alice Liddell", ["Friends"]))])

        source[0].groups = ["Friends", "Work"]
        #expect(mirror.run(source: source, target: &target) == [.set(try item("alice@a.example", "Alice Liddell", ["Friends", "Work"]))])

        source[0].groups = ["Work", "Friends"]
        #expect(mirror.run(source: source, target: &target).isEmpty, "group order carries no meaning")

        source[0].name = nil
        #expect(mirror.run(source: source, target: &target) == [.set(try item("alice@a.example", nil, ["Work", "Friends"]))])

        #expect(mirror.run(source: [], target: &target) == [.remove(try JID("alice@a.example"))])
        #expect(target.isEmpty)
        #expect(mirror.snapshot.entries.isEmpty)
    }

    @Test("an unchanged roster yields nothing, however often it is reconciled")
    func unchangedIsQuiet() throws {
        var mirror = Direction()
        var target = [try item("zoe@b.example", "Zoe")]
        let source = [try item("alice@a.example", "Alice"), try item("bob@a.example", "Bob", ["Work"])]
        #expect(mirror.run(source: source, target: &target).count == 2)
        for _ in 0..<3 {
            #expect(mirror.run(source: source, target: &target).isEmpty)
        }
    }

    // MARK: - While offline

    @Test("several changes made while the bridge was down are reconciled at once, in JID order")
    func offlineChanges() throws {
        var mirror = Direction()
        var target = [try item("eve@b.example", "Eve (by hand)")]
        var source = [
            try item("alice@a.example", "Alice", ["Friends"]),
            try item("bob@a.example", "Bob", ["Work"]),
            try item("dave@a.example", "Dave"),
        ]
        #expect(mirror.run(source: source, target: &target).count == 3)

        // The bridge is down: alice renamed, bob regrouped, dave removed, carol added.
        source = [
            try item("carol@a.example", "Carol"),
            try item("bob@a.example", "Bob", ["Work", "Chess"]),
            try item("alice@a.example", "Alice L."),
        ]
        let changes = mirror.run(source: source, target: &target)
        #expect(
            changes == [
                .set(try item("alice@a.example", "Alice L.")),
                .set(try item("bob@a.example", "Bob", ["Work", "Chess"])),
                .set(try item("carol@a.example", "Carol")),
                .remove(try JID("dave@a.example")),
            ]
        )
        #expect(Set(target.map(\.jid.description)) == ["alice@a.example", "bob@a.example", "carol@a.example", "eve@b.example"])
        #expect(target.first { $0.jid.description == "eve@b.example" } == (try item("eve@b.example", "Eve (by hand)")))
        #expect(mirror.run(source: source, target: &target).isEmpty)
    }

    @Test("a mirrored item removed on the source while offline goes; one added on the target by hand stays")
    func offlineRemovalAndHandAddition() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        _ = mirror.run(source: [try item("alice@a.example", "Alice"), try item("bob@a.example", "Bob")], target: &target)

        // Offline: alice removed on the source, frank added on the target by hand.
        target.append(try item("frank@b.example", "Frank"))
        let changes = mirror.run(source: [try item("bob@a.example", "Bob")], target: &target)
        #expect(changes == [.remove(try JID("alice@a.example"))])
        #expect(target.map(\.jid.description).sorted() == ["bob@a.example", "frank@b.example"])
    }

    // MARK: - Items the mirror does not own

    @Test("a contact the target already has is kept as the user made it: never set, never removed")
    func handAddedItemKept() throws {
        var mirror = Direction()
        let handMade = try item("alice@a.example", "Ally", ["Mine"])
        var target = [handMade]
        var source = [try item("alice@a.example", "Alice", ["Friends"])]

        #expect(mirror.run(source: source, target: &target).isEmpty)
        #expect(mirror.snapshot.entries["alice@a.example"] == entry("Alice", ["Friends"], .notOwned))
        #expect(mirror.snapshot.ownedJIDs.isEmpty)

        source[0].name = "Alice Liddell"
        source[0].groups = ["Work"]
        #expect(mirror.run(source: source, target: &target).isEmpty)

        #expect(mirror.run(source: [], target: &target).isEmpty)
        #expect(target == [handMade])
        #expect(mirror.snapshot.entries.isEmpty)
    }

    @Test("an owned item deleted on the target by hand is not recreated until the source item changes")
    func handDeletionSuppresses() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        var source = [try item("alice@a.example", "Alice")]
        _ = mirror.run(source: source, target: &target)

        target.removeAll()
        #expect(mirror.run(source: source, target: &target).isEmpty)
        #expect(mirror.snapshot.entries["alice@a.example"]?.ownership == .suppressed)
        #expect(mirror.run(source: source, target: &target).isEmpty)
        #expect(mirror.snapshot.ownedJIDs == ["alice@a.example"])

        source[0].name = "Alice Liddell"
        #expect(mirror.run(source: source, target: &target) == [.set(try item("alice@a.example", "Alice Liddell"))])
        #expect(mirror.snapshot.entries["alice@a.example"]?.ownership == .owned)

        // Owned again: a later source removal removes it.
        #expect(mirror.run(source: [], target: &target) == [.remove(try JID("alice@a.example"))])
    }

    @Test("a suppressed contact the user adds back on the target is the user's")
    func suppressedThenReAddedByHand() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        var source = [try item("alice@a.example", "Alice")]
        _ = mirror.run(source: source, target: &target)
        target.removeAll()
        _ = mirror.run(source: source, target: &target)

        target = [try item("alice@a.example", "My Alice")]
        #expect(mirror.run(source: source, target: &target).isEmpty)
        #expect(mirror.snapshot.entries["alice@a.example"]?.ownership == .notOwned)

        source[0].name = "Alice Liddell"
        #expect(mirror.run(source: source, target: &target).isEmpty)
        #expect(mirror.run(source: [], target: &target).isEmpty)
        #expect(target == [try item("alice@a.example", "My Alice")])
    }

    @Test("a suppressed contact removed from the source is forgotten, and comes back as new")
    func suppressedThenRemovedFromSource() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        let source = [try item("alice@a.example", "Alice")]
        _ = mirror.run(source: source, target: &target)
        target.removeAll()
        _ = mirror.run(source: source, target: &target)

        #expect(mirror.run(source: [], target: &target).isEmpty)
        #expect(mirror.snapshot.entries.isEmpty)
        #expect(mirror.run(source: source, target: &target) == [.set(try item("alice@a.example", "Alice"))])
    }

    @Test("a hand edit of an owned item is not reverted; the next source change wins")
    func handEditOfOwnedItem() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        var source = [try item("alice@a.example", "Alice", ["Friends"])]
        _ = mirror.run(source: source, target: &target)

        target = [try item("alice@a.example", "Ally", ["Mine"])]
        #expect(mirror.run(source: source, target: &target).isEmpty)
        #expect(target == [try item("alice@a.example", "Ally", ["Mine"])])

        source[0].groups = ["Friends", "Work"]
        #expect(mirror.run(source: source, target: &target) == [.set(try item("alice@a.example", "Alice", ["Friends", "Work"]))])

        // Still owned: a source removal removes the item whatever the user did to it.
        target = [try item("alice@a.example", "Ally again")]
        #expect(mirror.run(source: [], target: &target) == [.remove(try JID("alice@a.example"))])
    }

    @Test("a source change the target already shows is not set again")
    func changeAlreadyOnTarget() throws {
        var mirror = Direction()
        var target: [RosterItem] = []
        var source = [try item("alice@a.example", "Alice")]
        _ = mirror.run(source: source, target: &target)

        source[0].name = "Alice Liddell"
        target = [try item("alice@a.example", "Alice Liddell")]
        #expect(mirror.run(source: source, target: &target).isEmpty)
        #expect(mirror.snapshot.entries["alice@a.example"] == entry("Alice Liddell", [], .owned))
    }

    // MARK: - Groups filter

    @Test("only items in one of the filter's groups are mirrored; leaving the filter removes, entering creates")
    func groupsFilter() throws {
        var mirror = Direction(groups: ["Work", "Ops"])
        var target = [try item("hand@a.example", "By hand", ["Work"])]
        var source = [
            try item("alice@a.example", "Alice", ["Friends"]),
            try item("bob@a.example", "Bob", ["Work", "Chess"]),
            try item("carol@a.example", "Carol", ["Ops"]),
            try item("dave@a.example", "Dave"),
            try item("hand@a.example", "Hand", ["Work"]),
        ]
        #expect(
            mirror.run(source: source, target: &target) == [
                .set(try item("bob@a.example", "Bob", ["Work", "Chess"])),
                .set(try item("carol@a.example", "Carol", ["Ops"])),
            ]
        )
        #expect(Set(mirror.snapshot.entries.keys) == ["bob@a.example", "carol@a.example", "hand@a.example"])

        // bob leaves the filter, alice enters it, the hand-added item leaves it too.
        source[1].groups = ["Chess"]
        source[0].groups = ["Friends", "Ops"]
        source[4].groups = []
        #expect(
            mirror.run(source: source, target: &target) == [
                .set(try item("alice@a.example", "Alice", ["Friends", "Ops"])),
                .remove(try JID("bob@a.example")),
            ]
        )
        #expect(target.contains(try item("hand@a.example", "By hand", ["Work"])))
        #expect(mirror.run(source: source, target: &target).isEmpty)
    }

    @Test("no filter mirrors every item; an empty filter mirrors none", arguments: [nil, Set<String>()])
    func filterExtremes(groups: Set<String>?) throws {
        var mirror = Direction(groups: groups)
        var target: [RosterItem] = []
        let source = [try item("alice@a.example", "Alice", ["Friends"]), try item("bob@a.example")]
        #expect(mirror.run(source: source, target: &target).count == (groups == nil ? 2 : 0))
    }

    // MARK: - Keys and idempotence

    @Test("contacts are keyed by bare JID in canonical form")
    func canonicalKeys() throws {
        var mirror = Direction()
        var target = [try item("Bob@B.Example", "Bob")]
        _ = mirror.run(source: [try item("Alice@A.Example", "Alice"), try item("BOB@b.example", "Bob")], target: &target)
        #expect(mirror.snapshot.entries["alice@a.example"]?.ownership == .owned)
        #expect(mirror.snapshot.entries["bob@b.example"]?.ownership == .notOwned)
    }

    @Test("reconciling again after applying the changes yields none", arguments: 0..<4)
    func idempotent(scenario: Int) throws {
        let sources: [[RosterItem]] = [
            [try item("a@x.example", "A"), try item("b@x.example", "B", ["G"])],
            [try item("a@x.example", "A2", ["G"]), try item("c@x.example", "C")],
            [],
            [try item("a@x.example", "A2", ["G", "H"]), try item("b@x.example", "B"), try item("d@x.example")],
        ]
        var mirror = Direction(groups: scenario == 3 ? ["G"] : nil)
        var target = [try item("c@x.example", "C by hand"), try item("z@x.example")]
        for source in sources.prefix(scenario + 1) {
            _ = mirror.run(source: source, target: &target)
            let again = RosterMirrorReconciler.reconcile(
                source: source, target: target, snapshot: mirror.snapshot, groups: mirror.groups
            )
            #expect(again.changes.isEmpty)
            #expect(again.snapshot == mirror.snapshot)
        }
    }

}

// MARK: - Helpers

/// A roster item with only what the mirror looks at.
func item(_ jid: String, _ name: String? = nil, _ groups: [String] = []) throws -> RosterItem {
    RosterItem(jid: try JID(jid), name: name, groups: groups)
}

func entry(
    _ name: String?, _ groups: [String], _ ownership: RosterMirrorSnapshot.Ownership
) -> RosterMirrorSnapshot.Entry {
    RosterMirrorSnapshot.Entry(name: name, groups: groups, ownership: ownership)
}

/// Applies roster sets as a server would: a set replaces the item's name and groups
/// (keeping its subscription) or adds it; a remove deletes it.
func apply(_ changes: [RosterMirrorChange], to roster: inout [RosterItem]) {
    for change in changes {
        switch change {
        case .set(let item):
            if let index = roster.firstIndex(where: { $0.jid == item.jid }) {
                roster[index].name = item.name
                roster[index].groups = item.groups
            } else {
                roster.append(item)
            }
        case .remove(let jid):
            roster.removeAll { $0.jid == jid }
        }
    }
}

/// One mirror direction with its snapshot, applying its changes to the target like a
/// server that accepts every set.
struct Direction {
    var snapshot = RosterMirrorSnapshot()
    var groups: Set<String>?

    init(groups: Set<String>? = nil) {
        self.groups = groups
    }

    mutating func run(
        source: [RosterItem], target: inout [RosterItem], excluding: Set<String> = []
    ) -> [RosterMirrorChange] {
        let result = RosterMirrorReconciler.reconcile(
            source: source, target: target, snapshot: self.snapshot, groups: self.groups, excluding: excluding
        )
        apply(result.changes, to: &target)
        self.snapshot = result.snapshot
        return result.changes
    }
}

/// A two-way mirror: A→B and B→A, each excluding the contacts the other owns.
struct TwoWay {
    var a: [RosterItem]
    var b: [RosterItem]
    var aToB = Direction()
    var bToA = Direction()

    init(a: [RosterItem], b: [RosterItem]) {
        self.a = a
        self.b = b
    }

    /// Runs both directions, each on the rosters as the other left them.
    mutating func round(aFirst: Bool = true) -> (aToB: [RosterMirrorChange], bToA: [RosterMirrorChange], total: Int) {
        var aToBChanges: [RosterMirrorChange] = []
        var bToAChanges: [RosterMirrorChange] = []
        if aFirst {
            aToBChanges = self.aToB.run(source: self.a, target: &self.b, excluding: self.bToA.snapshot.ownedJIDs)
            bToAChanges = self.bToA.run(source: self.b, target: &self.a, excluding: self.aToB.snapshot.ownedJIDs)
        } else {
            bToAChanges = self.bToA.run(source: self.b, target: &self.a, excluding: self.aToB.snapshot.ownedJIDs)
            aToBChanges = self.aToB.run(source: self.a, target: &self.b, excluding: self.bToA.snapshot.ownedJIDs)
        }
        return (aToBChanges, bToAChanges, aToBChanges.count + bToAChanges.count)
    }
}

/// A folder under the system temporary folder, removed when the value is released.
final class MirrorTemporaryFolder {
    let url: URL

    init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("RosterMirrorTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    func path(_ relative: String) -> String { self.url.appendingPathComponent(relative).path }

    deinit { try? FileManager.default.removeItem(at: self.url) }
}
