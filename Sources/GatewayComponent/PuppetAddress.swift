import XMPP

/// A gateway's puppet: the JID on the component's domain that stands for one contact on
/// the linked side, the contact's bare JID escaped as the localpart (XEP-0106 §4):
/// `bob@home.example` on `home.work.example` is `bob\40home.example@home.work.example`.
public struct PuppetAddress: Hashable, Sendable {
    /// The component's domain.
    public let domain: String

    public init(domain: String) {
        self.domain = domain.lowercased()
    }

    /// The puppet JID for `contact` (a bare JID with a localpart, on the linked side); nil
    /// for a server's address, or when the escaped form is no valid JID (too long).
    public func puppet(for contact: String) -> JID? {
        guard let jid = try? JID(contact), jid.localpart != nil, jid.resourcepart == nil else { return nil }
        return try? JID(localpart: JIDEscaping.escape(jid.description), domainpart: self.domain)
    }

    /// The contact a puppet JID stands for: nil for the component's own domain, another
    /// domain, or a localpart that does not unescape to a bare JID with a localpart.
    public func contact(of puppet: JID) -> String? {
        guard puppet.domainpart.lowercased() == self.domain, let localpart = puppet.localpart else { return nil }
        guard let contact = try? JID(JIDEscaping.unescape(localpart)), contact.localpart != nil, contact.resourcepart == nil else { return nil }
        return contact.description
    }
}
