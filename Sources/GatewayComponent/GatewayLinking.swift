import TransportCore
import XMPP

/// What a gateway needs from the bridge: linking and unlinking accounts registered in band
/// (XEP-0077), and a contact's vCard through the linked account (XEP-0054).
public protocol GatewayLinking: Sendable {
    /// Logs in as `address` with `password`, stores the link and starts the account; the
    /// text of a refusal (wrong password, server unreachable) on failure.
    func register(gateway: String, user: String, address: JID, password: String) async -> Result<Void, GatewayRefusal>
    /// Removes `user`'s registered link and its stored credentials.
    func unregister(gateway: String, user: String) async -> Result<Void, GatewayRefusal>
    /// The vCard of `contact` as `account` sees it; nil when it has none.
    func vCard(account: String, contact: String) async -> XMLElement?
}
