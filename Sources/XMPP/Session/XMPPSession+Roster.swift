/// Roster, subscriptions and own presence (RFC 6121 §2, §3, §4).
extension XMPPSession {
    /// The roster as last fetched and updated by pushes.
    public var roster: Roster { self.machine.roster }

    /// Whether the roster has been fetched on the current connection.
    public var rosterLoaded: Bool { self.machine.rosterLoaded }

    /// Returns true once our roster copy satisfies `condition` (checked now and after every
    /// stanza that changes it, e.g. the push for our own change, which may come after the
    /// IQ result), or false after `timeout` on the session's clock.
    public func waitForRoster(timeout: Duration, _ condition: @escaping @Sendable (Roster) -> Bool) async -> Bool {
        if condition(self.machine.roster) { return true }
        let waiter = OneShotWaiter<Bool>()
        self.lifecycle.rosterWaiters.append((condition, waiter))
        defer { self.lifecycle.rosterWaiters.removeAll { $0.waiter === waiter } }
        return await waiter.value(until: self.dependencies.clock.now.advanced(by: timeout), on: self.dependencies.clock, orElse: false, executor: self.dependencies.executor)
    }

    /// Completes the roster waiters whose condition holds now.
    func checkRosterWaiters() {
        let roster = self.machine.roster
        for entry in self.lifecycle.rosterWaiters where entry.condition(roster) {
            entry.waiter.complete(.success(true))
        }
    }

    /// The full JID bound now, if connected.
    public var boundJID: JID? { self.current.connection?.jid }

    /// Every available resource of `contact` (best first), e.g. our own other clients.
    public func resources(of contact: JID) -> [Presence] {
        self.machine.presences.resources(of: contact.bare)
    }

    /// Sends unavailable presence but stays connected; ``setPresence(show:status:priority:)``
    /// makes the account available again. After a reconnect no presence is sent until then.
    public func setUnavailable(status: String? = nil) async throws {
        self.own.presence = nil
        var unavailable = Presence(type: .unavailable)
        unavailable.status = status
        try await self.send(unavailable.element)
    }

    /// The aggregate presence of a contact (highest priority resource), if available.
    public func presence(of contact: JID) -> Presence? {
        self.machine.presences.best(for: contact.bare)
    }

    /// Adds or updates a roster item (RFC 6121 §2.3); the server's push updates ``roster``.
    public func setContact(_ jid: JID, name: String? = nil, groups: [String] = []) async throws {
        let item = RosterItem(jid: jid.bare, name: name, groups: groups)
        _ = try await self.request(IQ(type: .set, id: self.nextID(), payload: Roster.setItem(item)))
    }

    /// Removes a roster item, which also cancels subscriptions both ways (RFC 6121 §2.5).
    public func removeContact(_ jid: JID) async throws {
        _ = try await self.request(IQ(type: .set, id: self.nextID(), payload: Roster.removeItem(jid.bare)))
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

    /// Elements every available presence we broadcast carries from now on (XEP-0153's photo
    /// hash); broadcast again at once when online.
    public func setPresenceExtensions(_ elements: [XMLElement]) async {
        guard self.own.setExtensions(elements) else { return }
        if let presence = self.own.presence, self.current.connection != nil { try? await self.announce(presence) }
    }

    /// Sets and broadcasts our presence (RFC 6121 §4.2); it is resent after every reconnect.
    public func setPresence(show: Presence.Show? = nil, status: String? = nil, priority: Int8 = 0) async throws {
        let presence = Presence(type: .available, show: show, status: status, priority: priority)
        self.own.presence = presence
        try await self.announce(presence)
    }
}
