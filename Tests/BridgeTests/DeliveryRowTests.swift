import Foundation
import Testing
import TransportCore

@testable import BridgeState

/// The one codec of a delivery's rows (issue 40): what both stores write is what the
/// records read back, column for column.
@Suite("DeliveryRow")
struct DeliveryRowTests {
    static let delivery: Delivery = {
        var delivery = Delivery(
            channel: "ops", target: Endpoint(transport: "home", address: "bob@b.example"), body: "[ops] alice: hi", originalBody: "hi",
            nick: "alice", subject: nil, type: .headline, source: Endpoint(transport: "work", address: "alice@a.example"), sourceID: "m-1",
            relayID: "r-1"
        )
        delivery.sequence = 42
        return delivery
    }()

    @Test("each row has one value per column, and every column is one the record reads back")
    func columnsMatchTheRecords() {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let queue = DeliveryRow.queue(Self.delivery, enqueuedAt: at, attempts: 3)
        let dead = DeliveryRow.deadLetter(Self.delivery, enqueuedAt: at, attempts: 3, reason: "gave up", deadAt: at)
        let relay = DeliveryRow.relay(Self.delivery, createdAt: at)
        #expect(queue.count == DeliveryRow.queueColumns.count)
        #expect(dead.count == DeliveryRow.deadLetterColumns.count)
        #expect(relay.count == DeliveryRow.relayColumns.count)
        #expect(DeliveryRow.queueColumns.filter { QueuedDeliveryRecord.CodingKeys(stringValue: $0) == nil } == [])
        #expect(DeliveryRow.deadLetterColumns.filter { DeadLetterRecord.CodingKeys(stringValue: $0) == nil } == [])
        #expect(DeliveryRow.relayColumns.filter { RelayRecord.CodingKeys(stringValue: $0) == nil } == [])
        let value = { (row: [DeliveryRow.Value], columns: [String], name: String) in row[columns.firstIndex(of: name)!] }
        #expect(value(queue, DeliveryRow.queueColumns, "sequence") == .integer(42))
        #expect(value(queue, DeliveryRow.queueColumns, "attempts") == .integer(3))
        #expect(value(queue, DeliveryRow.queueColumns, "type") == .text("headline"))
        #expect(value(queue, DeliveryRow.queueColumns, "subject") == .text(nil))
        #expect(value(dead, DeliveryRow.deadLetterColumns, "reason") == .text("gave up"))
        #expect(value(relay, DeliveryRow.relayColumns, "source_nick") == .text("alice"))
        #expect(value(relay, DeliveryRow.relayColumns, "created_at") == .time(at))
    }

    @Test("a row the store numbers has no sequence")
    func storeNumbers() {
        let row = DeliveryRow.queue(Self.delivery, enqueuedAt: Date(), attempts: 0, storeNumbers: true)
        #expect(row[DeliveryRow.queueColumns.firstIndex(of: "sequence")!] == .text(nil))
    }
}
