import Foundation
import Testing
import TransportCore

/// ``ArchivedMessage`` is a value with copy-on-write storage (issue 25): copies share it
/// until one changes, which must never show through another copy.
@Suite("ArchivedMessage value")
struct ArchivedMessageTests {
    static let message = ArchivedMessage(
        at: Date(timeIntervalSince1970: 1_800_000_000), channel: "ops", source: Endpoint(transport: "work", address: "alice@example.org"),
        sender: "alice@example.org/phone", nick: "alice", sourceID: "m-1", body: "disk full",
        copies: [.init(target: Endpoint(transport: "home", address: "bob@example.net"), id: "r-1")]
    )

    @Test("a changed copy leaves the original as it was, field by field, nested arrays too")
    func copiesAreIndependent() {
        let original = Self.message
        var copy = original
        #expect(copy == original)
        copy.body = "corrected"
        copy.copies.append(.init(target: Endpoint(transport: "stdout"), id: "r-2"))
        copy.number = 7
        copy.editedAt = Date(timeIntervalSince1970: 1_800_000_060)
        #expect(original.body == "disk full" && original.copies.count == 1 && original.number == 0 && original.editedAt == nil)
        #expect(copy.body == "corrected" && copy.copies.count == 2 && copy.number == 7)
        #expect(copy != original)
        var again = copy
        again.body = "disk full"
        #expect(copy.body == "corrected", "a copy of a copy is independent too")
    }

    @Test("equal values made apart are equal and hash alike; one differing field makes them differ")
    func equalityIsByValue() {
        let twin = ArchivedMessage(
            at: Self.message.at, channel: "ops", source: Self.message.source, sender: Self.message.sender, nick: "alice", sourceID: "m-1",
            body: "disk full", copies: Self.message.copies
        )
        #expect(twin == Self.message)
        #expect(Set([twin, Self.message]).count == 1)
        var other = twin
        other.retractedAt = Date(timeIntervalSince1970: 1_800_000_001)
        #expect(other != Self.message)
    }

    @Test("JSON reads back what it wrote, with number, edit and retraction times")
    func jsonRoundTrip() throws {
        var message = Self.message
        message.number = 42
        message.editedAt = Date(timeIntervalSince1970: 1_800_000_010)
        message.retractedAt = Date(timeIntervalSince1970: 1_800_000_020)
        let data = try JSONEncoder().encode(message)
        #expect(try JSONDecoder().decode(ArchivedMessage.self, from: data) == message)
    }
}
