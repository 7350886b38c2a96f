import Foundation
import GRDB

/// Gateway users' in-band registrations (XEP-0077), table `gateway_registrations`.
extension SQLiteStateStore {
    /// Every in-band registration, by gateway and user.
    package func gatewayRegistrations() throws(StateStoreError) -> [GatewayRegistrationRecord] {
        try self.read(.readGatewayRegistrations) { db in
            try GatewayRegistrationRecord.order(Column("gateway"), Column("user")).fetchAll(db)
        }
    }

    /// Stores (or replaces) a registration.
    package func saveGatewayRegistration(_ record: GatewayRegistrationRecord) throws(StateStoreError) {
        try self.write(.saveGatewayRegistration) { db in try record.save(db) }
    }

    /// Forgets `user`'s registrations, with `gateway` only or with any (also with
    /// gateways no longer configured); how many there were.
    @discardableResult
    package func removeGatewayRegistrations(gateway: String?, user: String) throws(StateStoreError) -> Int {
        try self.write(.removeGatewayRegistration) { db in
            var request = GatewayRegistrationRecord.filter(Column("user") == user.lowercased())
            if let gateway { request = request.filter(Column("gateway") == gateway) }
            return try request.deleteAll(db)
        }
    }
}
