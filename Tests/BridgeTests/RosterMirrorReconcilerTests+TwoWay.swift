import Foundation
import GRDB
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeFeatures
@testable import BridgeState

extension RosterMirrorReconcilerTests {
    // MARK: - Two-way

    @Test("a two-way mirror converges in one round; the next round sets nothing either way")
    func twoWayConverges() throws {
        var pair = TwoWay(
            a: [try item("alice@x.example", "Alice", ["Friends"]), try item("both@x.example", "Both on A")],
            b: [try item("carol@x.example", "Carol"), try item("both@x.example", "Both on B")]
        )
        let first = pair.round()
        #expect(first.aToB == [.set(try item("alice@x.example", "Alice", ["Friends"]))])
        #expect(first.bToA == [.set(try item("carol@x.example", "Carol"))])
        #expect(pair.round().total == 0)
        #expect(pair.round().total == 0)
        #expect(Set(pair.a.map(\.jid.description)) == ["alice@x.example", "both@x.example", "carol@x.example"])
        #expect(Set(pair.b.map(\.jid.description)) == ["alice@x.example", "both@x.example", "carol@x.example"])
        #expect(pair.a.contains(try item("both@x.example", "Both on A")))
        #expect(pair.b.contains(try item("both@x.example", "Both on B")))

        // A rename on A's original goes to B only; the mirrored copy is not echoed back.
        pair.a[pair.a.firstIndex { $0.jid.description == "alice@x.example" }!].name = "Alice L."
        let rename = pair.round()
        #expect(rename.aToB == [.set(try item("alice@x.example", "Alice L.", ["Friends"]))])
        #expect(rename.bToA.isEmpty)
        #expect(pair.round().total == 0)

        // A removal on B's original removes the copy on A, and nothing comes back.
        pair.b.removeAll { $0.jid.description == "carol@x.example" }
        let removal = pair.round()
        #expect(removal.aToB.isEmpty)
        #expect(removal.bToA == [.remove(try JID("carol@x.example"))])
        #expect(pair.round().total == 0)
        #expect(!pair.a.contains { $0.jid.description == "carol@x.example" })
    }

    @Test("contacts added on both sides while offline converge in one round, either order")
    func twoWayOfflineAdditions() throws {
        for aFirst in [true, false] {
            var pair = TwoWay(a: [try item("alice@x.example")], b: [try item("bob@x.example")])
            #expect(pair.round(aFirst: aFirst).total == 2)
            pair.a.append(try item("dave@x.example", "Dave"))
            pair.b.append(try item("erin@x.example", "Erin"))
            pair.b.removeAll { $0.jid.description == "alice@x.example" }  // a hand deletion of a copy
            #expect(pair.round(aFirst: aFirst).total == 2)
            #expect(pair.round(aFirst: aFirst).total == 0)
            #expect(Set(pair.a.map(\.jid.description)) == ["alice@x.example", "bob@x.example", "dave@x.example", "erin@x.example"])
            #expect(Set(pair.b.map(\.jid.description)) == ["bob@x.example", "dave@x.example", "erin@x.example"])
        }
    }

    @Test("excluding the opposite direction's copies keeps a removed contact from being echoed back")
    func exclusionPreventsEcho() throws {
        // A→B created alice on B; B→A never reconciled since (e.g. the bridge stopped in
        // between). Meanwhile alice was removed on A. B→A runs first at start.
        var aToB = Direction()
        var b: [RosterItem] = []
        _ = aToB.run(source: [try item("alice@x.example", "Alice")], target: &b)
        var a: [RosterItem] = []

        let echoing = RosterMirrorReconciler.reconcile(source: b, target: a, snapshot: RosterMirrorSnapshot(), groups: nil)
        #expect(echoing.changes == [.set(try item("alice@x.example", "Alice"))], "what exclusion prevents")

        var bToA = Direction()
        #expect(bToA.run(source: b, target: &a, excluding: aToB.snapshot.ownedJIDs).isEmpty)
        #expect(aToB.run(source: a, target: &b, excluding: bToA.snapshot.ownedJIDs) == [.remove(try JID("alice@x.example"))])
        #expect(a.isEmpty && b.isEmpty)
    }

    @Test("an excluded contact's snapshot entry is kept as it was")
    func excludedEntryKept() throws {
        let snapshot = RosterMirrorSnapshot(entries: ["alice@x.example": entry("Alice", [], .owned)])
        let result = RosterMirrorReconciler.reconcile(
            source: [], target: [try item("alice@x.example", "Alice")], snapshot: snapshot, groups: nil,
            excluding: ["alice@x.example"]
        )
        #expect(result.changes.isEmpty)
        #expect(result.snapshot == snapshot)
    }

    // MARK: - Stored snapshot

    @Test("a saved snapshot survives reopening the store; each mirror has its own")
    func snapshotSurvivesReopen() throws {
        let folder = try MirrorTemporaryFolder()
        let path = folder.path("state.sqlite")
        let snapshot = RosterMirrorSnapshot(entries: [
            "alice@a.example": entry("Alice", ["Friends", "Work"], .owned),
            "bob@a.example": entry(nil, [], .notOwned),
            "carol@a.example": entry("Carol", ["Ops"], .suppressed),
        ])
        do {
            let store = try SQLiteStateStore(path: path)
            #expect(try store.rosterMirrorSnapshot(id: "work->home") == RosterMirrorSnapshot())
            try store.saveRosterMirrorSnapshot(RosterMirrorSnapshot(), id: "work->home")
            try store.saveRosterMirrorSnapshot(snapshot, id: "work->home")
            try store.saveRosterMirrorSnapshot(RosterMirrorSnapshot(entries: ["x@y.example": entry("X", [], .owned)]), id: "home->work")
        }
        let store = try SQLiteStateStore(path: path)
        #expect(try store.rosterMirrorSnapshot(id: "work->home") == snapshot)
        #expect(try store.rosterMirrorSnapshot(id: "home->work").entries.keys.sorted() == ["x@y.example"])
        #expect(try store.rosterMirrorSnapshot(id: "unknown") == RosterMirrorSnapshot())

        let json = try DatabaseQueue(path: path).read { db in
            try String.fetchOne(db, sql: "SELECT snapshot_json FROM roster_mirror_snapshots WHERE mirror_id = 'work->home'")
        }
        #expect(json?.contains(#""alice@a.example":{"groups":["Friends","Work"],"name":"Alice","ownership":"owned"}"#) == true)
        #expect(json?.contains(#""ownership":"not-owned""#) == true)
    }

    @Test("a database from before roster mirroring gains the table and keeps its data")
    func upgradeFromV1() throws {
        let folder = try MirrorTemporaryFolder()
        let path = folder.path("state.sqlite")
        do {
            let store = try SQLiteStateStore(path: path)
            try store.addRoute(channel: "ops", member: ChannelMember(endpoint: Endpoint(transport: "stdin"), direction: .in))
        }
        // Make it a v1 database again.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "DROP TABLE roster_mirror_snapshots")
            try db.execute(sql: "DROP TABLE dead_letters")
            try db.execute(sql: "ALTER TABLE queue DROP COLUMN attempts")
            try db.execute(sql: "ALTER TABLE queue DROP COLUMN last_error")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier IN ('v2-roster-mirror', 'v3-attempts-dead-letters')")
        }
        let store = try SQLiteStateStore(path: path)
        #expect(try store.appliedMigrations() == StateStoreTests.allMigrations)
        #expect(try store.routes().count == 1)
        try store.saveRosterMirrorSnapshot(RosterMirrorSnapshot(entries: ["a@b.example": entry("A", [], .owned)]), id: "m")
        #expect(try store.rosterMirrorSnapshot(id: "m").entries.count == 1)
    }

    @Test("an unreadable stored snapshot is a typed error")
    func corruptSnapshot() throws {
        let folder = try MirrorTemporaryFolder()
        let path = folder.path("state.sqlite")
        _ = try SQLiteStateStore(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO roster_mirror_snapshots (mirror_id, snapshot_json) VALUES ('m', '{oops')")
        }
        let error = #expect(throws: StateStoreError.self) { try SQLiteStateStore(path: path).rosterMirrorSnapshot(id: "m") }
        #expect(error?.operation == .readRosterMirror)
    }
}
