import Foundation

/// In-band registrations with a gateway (XEP-0077), kept across restarts.
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol GatewayRegistrationStore: AnyObject, Sendable {
    /// Every in-band registration (XEP-0077), by gateway and user.
    func gatewayRegistrations() throws(StateStoreError) -> [GatewayRegistrationRecord]
    /// Stores (or replaces) a registration.
    func saveGatewayRegistration(_ record: GatewayRegistrationRecord) throws(StateStoreError)
    /// Forgets `user`'s registrations, with `gateway` only or with any; how many.
    @discardableResult func removeGatewayRegistrations(gateway: String?, user: String) throws(StateStoreError) -> Int
}
