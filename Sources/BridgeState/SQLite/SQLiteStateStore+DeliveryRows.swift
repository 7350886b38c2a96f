import Foundation
import GRDB
import TransportCore

/// SQLite's side of ``DeliveryRow``: the statements over its column lists, and its values
/// as arguments.
extension SQLiteStateStore {
    static let insertQueued = SQLiteStateStore.insert(into: "queue", DeliveryRow.queueColumns)
    static let insertDeadLetter = SQLiteStateStore.insert(into: "dead_letters", DeliveryRow.deadLetterColumns, verb: "INSERT OR REPLACE")
    static let insertRelay = SQLiteStateStore.insert(into: "relays", DeliveryRow.relayColumns, verb: "INSERT OR IGNORE")

    /// `row` as statement arguments. Built as optional existentials, the form GRDB takes
    /// without a generic detour (its `DatabaseValue` sequence initializer instantiated a
    /// key path on every call: half of the journal's SQLite time, measured with perf).
    static func arguments(_ row: [DeliveryRow.Value]) -> StatementArguments {
        var values: [(any DatabaseValueConvertible)?] = []
        values.reserveCapacity(row.count)
        for value in row {
            switch value {
            case .text(let text): values.append(text)
            case .integer(let number): values.append(number)
            case .time(let date): values.append(StorageTimestamp.text(date))
            }
        }
        return StatementArguments(values)
    }

    /// Queues `delivery` under its sequence, or, when it has none (0), under a new one the
    /// queue's AUTOINCREMENT gives (never reused); returns it.
    static func insertNumbered(_ delivery: Delivery, enqueuedAt: Date, in db: Database) throws -> Int64 {
        let row = DeliveryRow.queue(delivery, enqueuedAt: enqueuedAt, attempts: 0, storeNumbers: delivery.sequence == 0)
        try db.cachedStatement(sql: Self.insertQueued).execute(arguments: Self.arguments(row))
        return db.lastInsertedRowID
    }

    private static func insert(into table: String, _ columns: [String], verb: String = "INSERT") -> String {
        "\(verb) INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
    }
}
