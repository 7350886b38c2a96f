import Foundation
import GRDB

/// A row of `gateway_registrations`: a gateway user who linked an account in band
/// (XEP-0077), with the account's address and password. The database file is mode 0600;
/// the password is never logged or shown.
package struct GatewayRegistrationRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, CustomStringConvertible {
    package static let databaseTableName = "gateway_registrations"

    /// The gateway's name (`[gateway.NAME]`).
    package var gateway: String
    /// The user's bare JID, lower-cased.
    package var user: String
    /// The linked account's bare JID.
    package var address: String
    package var password: String
    package var registeredAt: Date

    package enum CodingKeys: String, CodingKey {
        case gateway, user, address, password
        case registeredAt = "registered_at"
    }

    /// Names the link, never the password.
    package var description: String { "\(self.gateway): \(self.user) → \(self.address)" }

    package init(gateway: String, user: String, address: String, password: String, registeredAt: Date) {
        self.gateway = gateway
        self.user = user
        self.address = address
        self.password = password
        self.registeredAt = registeredAt
    }
}
