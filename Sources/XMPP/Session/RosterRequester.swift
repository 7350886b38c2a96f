/// What roster and subscription requests (RFC 6121 §2.3–2.5, §3) need of a session: an IQ
/// asked and a stanza sent. ``XMPPSession`` is one; the requests themselves are built here,
/// once, for any of them. They run in the caller's context: taking an id and asking are
/// two calls to the requester, with nothing between them that depends on the other.
public protocol RosterRequester: IQRequester {
    /// Sends a stanza, giving a message or presence an id when it has none (RFC 6120 §8.1.3).
    func send(_ element: XMLElement) async throws
}

extension RosterRequester {
    /// Adds or updates a roster item (RFC 6121 §2.3); the server's push updates the roster.
    public func setContact(_ jid: JID, name: String? = nil, groups: [String] = []) async throws {
        let item = RosterItem(jid: jid.bare, name: name, groups: groups)
        _ = try await self.request(IQ(type: .set, id: await self.nextID(), payload: Roster.setItem(item)), timeout: nil)
    }

    /// Removes a roster item, which also cancels subscriptions both ways (RFC 6121 §2.5).
    public func removeContact(_ jid: JID) async throws {
        _ = try await self.request(IQ(type: .set, id: await self.nextID(), payload: Roster.removeItem(jid.bare)), timeout: nil)
    }

    /// Asks to see a contact's presence (RFC 6121 §3.1.1).
    public func subscribe(to contact: JID) async throws {
        try await self.send(Presence(type: .subscribe, to: contact.bare).element)
    }

    /// Stops seeing a contact's presence: cancels our subscription to them (RFC 6121 §3.3).
    public func unsubscribe(from contact: JID) async throws {
        try await self.send(Presence(type: .unsubscribe, to: contact.bare).element)
    }

    /// Lets a contact see our presence (RFC 6121 §3.1.4): approves a request, or pre-approves.
    public func approveSubscription(from contact: JID) async throws {
        try await self.send(Presence(type: .subscribed, to: contact.bare).element)
    }

    /// Declines or revokes a contact's subscription to our presence (RFC 6121 §3.2).
    public func denySubscription(from contact: JID) async throws {
        try await self.send(Presence(type: .unsubscribed, to: contact.bare).element)
    }
}
