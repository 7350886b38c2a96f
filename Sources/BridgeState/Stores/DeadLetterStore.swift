import Foundation

/// Deliveries the bridge gave up on (issue 6), kept until retried or dropped (`xmpp-bridge queue`).
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol DeadLetterStore: AnyObject, Sendable {
    /// Dead letters, oldest first, for `transport` or every transport.
    func deadLetters(transport: String?) throws(StateStoreError) -> [DeadLetterRecord]
    func deadLetterCount(transport: String) throws(StateStoreError) -> Int
    /// Queues dead letters anew (attempts reset, fresh sequences); nil means all. How many.
    @discardableResult func retryDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int
    /// Forgets dead letters; nil means all. How many.
    @discardableResult func dropDeadLetters(_ sequences: [Int64]?) throws(StateStoreError) -> Int
    /// Each of `relayIDs` that is a dead letter, with its reason.
    func deadLetterReasons(relayIDs: [String]) throws(StateStoreError) -> [String: String]
}

extension DeadLetterStore {
    package func deadLetters() throws(StateStoreError) -> [DeadLetterRecord] {
        try self.deadLetters(transport: nil)
    }
}
