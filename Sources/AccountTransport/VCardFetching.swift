import XMPP

/// A transport that fetches a contact's vCard (XEP-0054) for others to serve: the gateway
/// answers a vCard request to a puppet with the contact's, fetched by the linked account.
public protocol VCardFetching: Sendable {
    /// `contact`'s vCard, or nil when it has none or the account cannot ask now.
    func vCard(of contact: JID) async -> XMLElement?
}
