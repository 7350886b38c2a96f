import Foundation
import GRDB

/// A row of `gateway_registrations`: a gateway user who linked an account in band
/// (XEP-0077), with the account's address and password. The database file is mode 0600;
/// the password is never logged or shown.
struct GatewayRegistrationRecord: Codable, Hashable, Sendable, FetchableRecord, PersistableRecord, CustomStringConvertible {
    static let databaseTableName = "gateway_registrations"

    /// The gateway's name (`[gateway.NAME]`).
    var gateway: String
    /// The user's bare JID, lower-cased.
    var user: String
    /// The linked account's bare JID.
    var address: String
    var password: String
    var registeredAt: Date

    enum CodingKeys: String, CodingKey {
        case gateway, user, address, password
        case registeredAt = "registered_at"
    }

    /// Names the link, never the password.
    var description: String { "\(self.gateway): \(self.user) → \(self.address)" }
}
