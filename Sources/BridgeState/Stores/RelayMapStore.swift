import Foundation
import TransportCore

/// The id map (table `relays`): which copies each source message was relayed as, with their stanza-ids (XEP-0359), for echoes, receipts and references (issue 12).
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol RelayMapStore: AnyObject, Sendable {
    /// Records the relay ids of deliveries sent without queueing (a known one changes nothing).
    func recordRelays(_ deliveries: [Delivery]) throws(StateStoreError)
    /// Every relayed copy of the stanza `id` received from `transport`/`address`, oldest first.
    func relays(forSource transport: String, address: String?, id: String) throws(StateStoreError) -> [RelayRecord]
    /// The ids each endpoint knows the message `id` by, where `source` refers to it.
    func references(to id: String, from source: Endpoint, ownOnly: Bool, nick: String?) throws(StateStoreError) -> ReferenceMap
    /// The copy sent with relay id `id`, if the id map still has it.
    func relay(_ id: String) throws(StateStoreError) -> RelayRecord?
    /// Whether `id` is one this bridge generated for a relayed copy (an echo).
    func isRelayID(_ id: String) throws(StateStoreError) -> Bool
    /// Forgets relays recorded before `date`; how many.
    @discardableResult func pruneRelays(before date: Date) throws(StateStoreError) -> Int
}

extension RelayMapStore {
    package func references(to id: String, from source: Endpoint, ownOnly: Bool = false) throws(StateStoreError) -> ReferenceMap {
        try self.references(to: id, from: source, ownOnly: ownOnly, nick: nil)
    }
}
