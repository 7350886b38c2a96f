/// Roster, subscriptions and own presence (RFC 6121 §2, §3, §4).
extension XMPPSession {
    /// The roster as last fetched and updated by pushes.
    public var roster: Roster { self.machine.roster }

    /// Whether the roster has been fetched on the current connection.
    public var rosterLoaded: Bool { self.machine.rosterLoaded }

    /// Returns true once our roster copy satisfies `condition` (checked now and after every
    /// stanza that changes it, e.g. the push for our own change, which may come after the
    /// IQ result), or false after `timeout` on the session's clock.
    @_specialize(exported: true, where C == EventLoopClock)
    public func waitForRoster(timeout: Duration, _ condition: @escaping @Sendable (Roster) -> Bool) async -> Bool {
        if condition(self.machine.roster) { return true }
        let waiter = OneShotWaiter<Bool>()
        self.lifecycle.rosterWaiters.append((condition, waiter))
        defer { self.lifecycle.rosterWaiters.removeAll { $0.waiter === waiter } }
        return await waiter.value(until: self.dependencies.clock.now.advanced(by: timeout), on: self.dependencies.clock, orElse: false, executor: self.dependencies.executor)
    }

    /// The full JID bound now, if connected.
    public var boundJID: JID? { self.current.connection?.jid }

    /// Every available resource of `contact` (best first), e.g. our own other clients.
    @_specialize(exported: true, where C == EventLoopClock)
    public func resources(of contact: JID) -> [Presence] {
        self.machine.presences.resources(of: contact.bare)
    }

    /// Sends unavailable presence but stays connected; ``setPresence(show:status:priority:)``
    /// makes the account available again. After a reconnect no presence is sent until then.
    @_specialize(exported: true, where C == EventLoopClock)
    public func setUnavailable(status: String? = nil) async throws {
        self.own.presence = nil
        var unavailable = Presence(type: .unavailable)
        unavailable.status = status
        try await self.send(unavailable.element)
    }

    /// The aggregate presence of a contact (highest priority resource), if available.
    @_specialize(exported: true, where C == EventLoopClock)
    public func presence(of contact: JID) -> Presence? {
        self.machine.presences.best(for: contact.bare)
    }

    /// Elements every available presence we broadcast carries from now on (XEP-0153's photo
    /// hash); broadcast again at once when online.
    @_specialize(exported: true, where C == EventLoopClock)
    public func setPresenceExtensions(_ elements: [XMLElement]) async {
        guard let presence = self.presenceToAnnounce(setting: elements) else { return }
        try? await self.announce(presence)
    }

    /// Sets the extensions; the presence to broadcast again, if any. Synchronous: the
    /// transport's task sets them once before its session runs, and keeps this frame's
    /// size for life.
    @inline(never)
    private func presenceToAnnounce(setting elements: [XMLElement]) -> Presence? {
        guard self.own.setExtensions(elements), self.current.connection != nil else { return nil }
        return self.own.presence
    }

    /// Sets and broadcasts our presence (RFC 6121 §4.2); it is resent after every reconnect.
    @_specialize(exported: true, where C == EventLoopClock)
    public func setPresence(show: Presence.Show? = nil, status: String? = nil, priority: Int8 = 0) async throws {
        let presence = Presence(type: .available, show: show, status: status, priority: priority)
        self.own.presence = presence
        try await self.announce(presence)
    }
}
