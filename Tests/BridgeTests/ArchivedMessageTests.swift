import Foundation
import LocalArchive
import Testing
import TransportCore

/// ``ArchivedMessage``'s own Codable (issue 25: its keys and optional fields, as
/// `history --json` and the HTTP route use them) reads back what it wrote.
@Suite("ArchivedMessage JSON")
struct ArchivedMessageTests {
    static let message = ArchivedMessage(
        at: Date(timeIntervalSince1970: 1_800_000_000), channel: "ops", source: Endpoint(transport: "work", address: "alice@example.org"),
        sender: "alice@example.org/phone", nick: "alice", sourceID: "m-1", body: "disk full",
        copies: [.init(target: Endpoint(transport: "home", address: "bob@example.net"), id: "r-1")]
    )

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
