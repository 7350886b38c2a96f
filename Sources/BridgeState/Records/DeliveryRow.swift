import Foundation
import TransportCore

/// A delivery as the rows both stores write for it (issue 40: one codec per record): its
/// `queue` row, its `dead_letters` row and its id map row in `relays`, each a column list
/// and the values in that order. SQLite binds the values as arguments, PostgreSQL writes
/// them as literals (``SQLLiteral``); neither spells the mapping itself. Rows are read
/// back by the Codable records (``QueuedDeliveryRecord``, ``DeadLetterRecord``,
/// ``RelayRecord``) through GRDB and ``PostgresRowDecoder`` alike.
package enum DeliveryRow {
    /// One stored value: text or NULL, an integer, or a time as the stores' text
    /// (``StorageTimestamp``).
    package enum Value: Sendable, Equatable {
        case text(String?)
        case integer(Int64)
        case time(Date)
    }

    /// The columns a delivery fills in both `queue` and `dead_letters`, in order (the
    /// sequence first), named as the queue's record reads them.
    private static let deliveryColumns: [QueuedDeliveryRecord.CodingKeys] = [
        .sequence, .channel, .targetTransport, .targetAddress, .body, .originalBody, .nick, .subject, .type,
        .sourceTransport, .sourceAddress, .sourceID, .relayID, .enqueuedAt, .attempts,
    ]

    /// `queue`'s columns, in the order of ``queue(_:enqueuedAt:attempts:storeNumbers:)``.
    package static let queueColumns = (Self.deliveryColumns + [.content]).map(\.rawValue)

    /// `dead_letters`' columns, in the order of ``deadLetter(_:enqueuedAt:attempts:reason:deadAt:)``.
    package static let deadLetterColumns = Self.deliveryColumns.map(\.rawValue)
        + ([.reason, .deadAt, .content] as [DeadLetterRecord.CodingKeys]).map(\.rawValue)

    /// The id map's columns a delivery fills (the rest come later: receipts, stanza-ids).
    package static let relayColumns = ([
        .relayID, .channel, .sourceTransport, .sourceAddress, .sourceID, .targetTransport, .targetAddress, .createdAt, .sourceNick,
    ] as [RelayRecord.CodingKeys]).map(\.rawValue)

    /// A queued delivery's row; with `storeNumbers`, its sequence is NULL for the store to
    /// give (SQLite's AUTOINCREMENT).
    package static func queue(_ delivery: Delivery, enqueuedAt: Date, attempts: Int, storeNumbers: Bool = false) -> [Value] {
        var row = Self.delivery(delivery, enqueuedAt: enqueuedAt, attempts: attempts, capacity: Self.queueColumns.count)
        row.append(.text(MessageContentColumn.encode(delivery.content)))
        if storeNumbers { row[0] = .text(nil) }
        return row
    }

    /// A dead letter's row.
    package static func deadLetter(_ delivery: Delivery, enqueuedAt: Date, attempts: Int, reason: String, deadAt: Date) -> [Value] {
        var row = Self.delivery(delivery, enqueuedAt: enqueuedAt, attempts: attempts, capacity: Self.deadLetterColumns.count)
        row += [.text(reason), .time(deadAt), .text(MessageContentColumn.encode(delivery.content))]
        return row
    }

    /// A delivery's id map row, recorded when it is queued (`createdAt`).
    package static func relay(_ delivery: Delivery, createdAt: Date) -> [Value] {
        [
            .text(delivery.relayID), .text(delivery.channel), .text(delivery.source.transport), .text(delivery.source.address),
            .text(delivery.sourceID), .text(delivery.target.transport), .text(delivery.target.address), .time(createdAt),
            .text(delivery.nick),
        ]
    }

    /// The columns both rows share, in an array with room for the rest of a row.
    private static func delivery(_ delivery: Delivery, enqueuedAt: Date, attempts: Int, capacity: Int) -> [Value] {
        var row: [Value] = []
        row.reserveCapacity(capacity)
        row += [
            .integer(delivery.sequence), .text(delivery.channel), .text(delivery.target.transport), .text(delivery.target.address),
            .text(delivery.body), .text(delivery.originalBody), .text(delivery.nick), .text(delivery.subject),
            .text(delivery.type.rawValue), .text(delivery.source.transport), .text(delivery.source.address),
            .text(delivery.sourceID), .text(delivery.relayID), .time(enqueuedAt), .integer(Int64(attempts)),
        ]
        return row
    }
}
