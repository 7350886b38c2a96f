import Foundation
import GRDB
import TransportCore

/// Dead letters (issue 8): deliveries that stopped being attempted, kept with the reason
/// until `xmpp-bridge queue retry` queues them anew or `queue drop` forgets them. These
/// direct edits are for when no daemon runs; a running daemon does the same through its
/// ``Journal`` so its in-memory queues stay the truth.
extension SQLiteStateStore {
    /// Dead letters, oldest first, for `transport` or every transport.
    package func deadLetters(transport: String?) throws(StateStoreError) -> [DeadLetterRecord] {
        try self.read(.readDeadLetters) { db in
            var request = DeadLetterRecord.order(DeadLetterRecord.Columns.sequence)
            if let transport { request = request.filter(DeadLetterRecord.Columns.targetTransport == transport) }
            return try request.fetchAll(db)
        }
    }

    package func deadLetterCount(transport: String) throws(StateStoreError) -> Int {
        try self.read(.readDeadLetters) { db in
            try DeadLetterRecord.filter(DeadLetterRecord.Columns.targetTransport == transport).fetchCount(db)
        }
    }

    /// Queues dead letters anew (attempts reset, fresh sequences after every existing one);
    /// `sequences` nil means all. Returns how many.
    @discardableResult
    package func retryDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int {
        let now = self.now()
        return try self.write(.editDeadLetters) { db in
            var request = DeadLetterRecord.order(DeadLetterRecord.Columns.sequence)
            if let sequences { request = request.filter(keys: sequences) }
            let dead = try request.fetchAll(db)
            for letter in dead {
                var delivery = letter.delivery
                delivery.sequence = 0  // queued anew under a fresh sequence
                _ = try Self.insertNumbered(delivery, enqueuedAt: now, in: db)
                try letter.delete(db)
            }
            return dead.count
        }
    }

    /// Forgets dead letters; `sequences` nil means all. Returns how many.
    @discardableResult
    package func dropDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int {
        try self.write(.editDeadLetters) { db in
            if let sequences { return try DeadLetterRecord.deleteAll(db, keys: sequences) }
            return try DeadLetterRecord.deleteAll(db)
        }
    }
}
