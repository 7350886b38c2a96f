import TransportCore

/// Relays presence between accounts and to local transports (issue 5, deliverables 1
/// "Presence relay on channels" and 2 "Own-presence mirror"), without I/O.
///
/// Who feeds whom is ``PresenceTopology``. Each account the relay drives publishes one
/// presence (RFC 6121 §4.2 initial, §4.4 updates, §4.5 unavailable):
/// - **Fed by contacts**: the aggregate of its feeding contacts (``aggregate(_:)``): the
///   most available wins (chat > available > away > xa > dnd > unavailable); one present
///   contact lends its status as is; several are listed as `nick: status` (or
///   `nick: availability` without status), sorted by nick, joined by `"; "`; none present →
///   unavailable. A contact not heard of yet counts as unavailable.
/// - **Mirror target**: exactly what ``ownPresenceChanged(account:state:now:)`` last
///   reported for its source (unavailable until then). Mirrors take precedence: contacts
///   never feed a mirror target.
/// - **Released**: an account that was driven and no longer is after a reload returns to
///   plain available, what a fresh session announces.
///
/// Presence floods are coalesced per account: at most one publish per `interval`. A change
/// within the interval after the last publish yields one ``Action/schedule(account:at:)``
/// for `lastPublish + interval` (never a second while one is pending); at the timer the
/// then-current presence is published if it differs from the last published one. An
/// unchanged presence is never published, except by
/// ``accountOnline(account:now:)``: a fresh connection needs its presence whatever was
/// published before.
///
/// Local transports get every actual change of a channel member's presence as
/// ``Action/localEvent(channel:transport:contact:nick:state:)``, not coalesced.
///
/// Actions come in a fixed order: local events (channel, then member order), then account
/// actions by account name.
package struct PresenceRelay<C: Clock>: Sendable where C.Duration == Swift.Duration, C.Instant: Sendable {
    package enum Action: Hashable, Sendable {
        /// Broadcast `state` as the account's presence (``PresencePublishing``).
        case publish(account: String, PresenceState)
        /// Arm a timer and call ``PresenceRelay/timerFired(account:now:)`` at `at`.
        case schedule(account: String, at: C.Instant)
        /// Tell a local transport that a member of `channel` changed presence.
        case localEvent(channel: String, transport: String, contact: Endpoint, nick: String, state: PresenceState)
    }

    /// Where one account stands with publishing: the coalescing state.
    package enum State: Hashable, Sendable {
        /// Nothing published by the relay on this account (the session's own initial
        /// presence stands): the next presence is published at once.
        case idle
        /// `state` was published at `at`; no timer is armed.
        case published(PresenceState, at: C.Instant)
        /// `state` was published at `at`, something changed since, and a timer is armed for
        /// `due` (`at + interval`).
        case waiting(published: PresenceState, at: C.Instant, due: C.Instant)
    }

    /// What is known of one contact: present ones only; a missing contact is unavailable.
    package struct Contact: Hashable, Sendable {
        package var nick: String
        package var state: PresenceState

        package init(nick: String, state: PresenceState) {
            self.nick = nick
            self.state = state
        }
    }

    /// What an account announces when the relay stops driving it.
    package static var releasedPresence: PresenceState { PresenceState(availability: .available) }

    /// The least time between two publishes on one account.
    package let interval: Duration
    package private(set) var topology: PresenceTopology
    /// Present contacts by (account, lower-cased bare JID).
    package private(set) var contacts: [Endpoint: Contact] = [:]
    /// The user's other clients per account, as last reported; missing → unavailable.
    package private(set) var ownPresence: [String: PresenceState] = [:]
    /// The coalescing state per account; missing → ``State/idle``.
    package private(set) var states: [String: State] = [:]

    /// - Parameters:
    ///   - presenceChannels: names of the channels with presence relay on (the
    ///     configuration decides the defaults).
    ///   - accounts: names of the XMPP transports; every other transport is local.
    ///   - mirrors: own-presence mirrors: account `to` follows the user's other clients on
    ///     account `from`.
    ///   - ownJIDs: bare JIDs of the bridge's own accounts, never relayed as contacts.
    package init(
        channels: [RelayChannel], presenceChannels: Set<String>, accounts: Set<String>,
        mirrors: [(from: String, to: String)], interval: Duration, ownJIDs: Set<String> = []
    ) {
        self.interval = interval
        self.topology = PresenceTopology(
            channels: channels, presenceChannels: presenceChannels, accounts: accounts, mirrors: mirrors, ownJIDs: ownJIDs
        )
    }

    // MARK: - Events

    /// A contact's presence changed, as its account sees it (the bare JID's aggregate,
    /// RFC 6121 §4.7.2); `.unavailable` when it went away.
    ///
    /// - Parameter contact: the account and the contact's bare JID.
    package mutating func contactChanged(_ contact: Endpoint, nick: String, state: PresenceState, now: C.Instant) -> [Action] {
        // Notices and mirrored presence tell availability and status only.
        let state = state.withoutAvatar
        let contact = PresenceTopology.normalized(contact)
        guard !self.topology.isOwnAccount(contact) else { return [] }
        let previous = self.contacts[contact]
        switch state.availability {
        case .unavailable:
            self.contacts[contact] = nil
        case .dnd, .xa, .away, .available, .chat:
            self.contacts[contact] = Contact(nick: nick, state: state)
        }
        var actions: [Action] = []
        if (previous?.state ?? .unavailable) != state {
            actions += self.localEvents(for: contact, nick: nick, state: state)
        }
        return actions + self.reconcile(self.topology.fedAccounts[contact] ?? [], now: now)
    }

    /// The user's other clients on `account` changed presence (aggregated by the transport
    /// over the account's own resources, excluding the bridge's): mirror targets follow.
    package mutating func ownPresenceChanged(account: String, state: PresenceState, now: C.Instant) -> [Action] {
        switch state.availability {
        case .unavailable:
            self.ownPresence[account] = nil
        case .dnd, .xa, .away, .available, .chat:
            self.ownPresence[account] = state
        }
        return self.reconcile(self.topology.mirrorTargets[account] ?? [], now: now)
    }

    /// The timer armed for ``Action/schedule(account:at:)`` fired.
    package mutating func timerFired(account: String, now: C.Instant) -> [Action] {
        switch self.states[account, default: .idle] {
        case .idle, .published:
            return []  // a stale timer: nothing is pending
        case .waiting(let published, let at, let due):
            guard now >= due else { return [.schedule(account: account, at: due)] }
            guard let desired = self.desired(for: account), desired != published else {
                self.states[account] = .published(published, at: at)
                return []
            }
            let earliest = at.advanced(by: self.interval)
            guard now >= earliest else {
                // accountOnline published since the timer was armed: keep the interval.
                self.states[account] = .waiting(published: published, at: at, due: earliest)
                return [.schedule(account: account, at: earliest)]
            }
            return self.publish(desired, on: account, now: now)
        }
    }

    /// `account` connected (first connect or reconnect): its presence is published at once
    /// if the relay drives it, whatever was published before or how recently. An account
    /// the relay does not drive keeps the session's own initial presence.
    package mutating func accountOnline(account: String, now: C.Instant) -> [Action] {
        guard self.topology.isManaged(account), let desired = self.desired(for: account) else {
            self.states[account] = nil
            return []
        }
        switch self.states[account, default: .idle] {
        case .idle, .published:
            self.states[account] = .published(desired, at: now)
        case .waiting(_, _, let due):
            self.states[account] = .waiting(published: desired, at: now, due: due)
        }
        return [.publish(account: account, desired)]
    }

    /// `account` lost its connection: what it saw of its contacts and of the user's other
    /// clients is unknown now and counts as unavailable, so no stale presence outlives an
    /// outage (a reconnect reports the present ones again, RFC 6121 §4.2.2).
    package mutating func accountOffline(account: String, now: C.Instant) -> [Action] {
        let gone = self.contacts.filter { $0.key.transport == account }.sorted { $0.key.description < $1.key.description }
        var actions: [Action] = []
        var affected: Set<String> = []
        for (contact, known) in gone {
            self.contacts[contact] = nil
            actions += self.localEvents(for: contact, nick: known.nick, state: .unavailable)
            affected.formUnion(self.topology.fedAccounts[contact] ?? [])
        }
        if self.ownPresence.removeValue(forKey: account) != nil {
            affected.formUnion(self.topology.mirrorTargets[account] ?? [])
        }
        return actions + self.reconcile(affected.sorted(), now: now)
    }

    /// The configuration was reloaded: recompute who feeds whom, keep what is known of
    /// contacts and own presence (of accounts that still exist), and bring every account's
    /// presence in line. Accounts no longer driven return to plain available; removed
    /// accounts are forgotten. No local events are emitted for membership changes.
    ///
    /// - Parameter ownJIDs: nil keeps the current ones.
    package mutating func update(
        channels: [RelayChannel], presenceChannels: Set<String>, accounts: Set<String>,
        mirrors: [(from: String, to: String)], ownJIDs: Set<String>? = nil, now: C.Instant
    ) -> [Action] {
        self.topology = PresenceTopology(
            channels: channels, presenceChannels: presenceChannels, accounts: accounts, mirrors: mirrors,
            ownJIDs: ownJIDs ?? self.topology.ownJIDs
        )
        self.contacts = self.contacts.filter { accounts.contains($0.key.transport) && !self.topology.isOwnAccount($0.key) }
        self.ownPresence = self.ownPresence.filter { accounts.contains($0.key) }
        self.states = self.states.filter { accounts.contains($0.key) }
        let touched = Set(self.states.keys).union(accounts.filter { self.topology.isManaged($0) })
        return self.reconcile(touched.sorted(), now: now)
    }

    // MARK: - Queries

    /// The presence the relay wants `account` to show now; nil when it does not drive the
    /// account and never published on it.
    package func desired(for account: String) -> PresenceState? {
        if let source = self.topology.mirrorSource[account] {
            return self.ownPresence[source] ?? .unavailable
        }
        if let feeders = self.topology.feeders[account] {
            return Self.aggregate(feeders.compactMap { self.contacts[$0] })
        }
        switch self.states[account, default: .idle] {
        case .idle:
            return nil
        case .published, .waiting:
            return Self.releasedPresence
        }
    }

    /// A contact's presence as last reported; unavailable when gone or never heard of.
    package func presence(of contact: Endpoint) -> PresenceState {
        self.contacts[PresenceTopology.normalized(contact)]?.state ?? .unavailable
    }

    /// Several contacts' presences as one (issue 5): the most available wins; the status is
    /// the one present contact's as is, or each present contact's `nick: status` (the
    /// availability's name without status) in nick order joined by `"; "`. No present
    /// contact → unavailable.
    package static func aggregate(_ contacts: [Contact]) -> PresenceState {
        let present = contacts.filter { $0.state.availability != .unavailable }.sorted(by: Self.nickOrder)
        guard let best = present.map(\.state.availability).max() else { return .unavailable }
        if present.count == 1 { return present[0].state }
        let status = present.map { contact in
            let text = contact.state.status.flatMap { $0.isEmpty ? nil : $0 } ?? contact.state.availability.description
            return "\(contact.nick): \(text)"
        }
        return PresenceState(availability: best, status: status.joined(separator: "; "))
    }

    // MARK: - Steps

    /// Nick order, case-insensitive first; ties broken so the order never depends on
    /// dictionary order.
    private static func nickOrder(_ lhs: Contact, _ rhs: Contact) -> Bool {
        let left = (lhs.nick.lowercased(), lhs.nick, lhs.state.status ?? "", lhs.state.availability.rawValue)
        let right = (rhs.nick.lowercased(), rhs.nick, rhs.state.status ?? "", rhs.state.availability.rawValue)
        return left < right
    }

    private func localEvents(for contact: Endpoint, nick: String, state: PresenceState) -> [Action] {
        (self.topology.localTargets[contact] ?? []).map {
            .localEvent(channel: $0.channel, transport: $0.transport, contact: contact, nick: nick, state: state)
        }
    }

    /// Brings each account, in the given order, towards its desired presence under the
    /// coalescing rule.
    private mutating func reconcile(_ accounts: [String], now: C.Instant) -> [Action] {
        accounts.flatMap { self.reconcile($0, now: now) }
    }

    private mutating func reconcile(_ account: String, now: C.Instant) -> [Action] {
        guard let desired = self.desired(for: account) else { return [] }
        switch self.states[account, default: .idle] {
        case .idle:
            return self.publish(desired, on: account, now: now)
        case .published(let published, let at):
            guard desired != published else { return [] }
            let due = at.advanced(by: self.interval)
            guard now >= due else {
                self.states[account] = .waiting(published: published, at: at, due: due)
                return [.schedule(account: account, at: due)]
            }
            return self.publish(desired, on: account, now: now)
        case .waiting:
            return []  // the armed timer publishes whatever is current then
        }
    }

    private mutating func publish(_ state: PresenceState, on account: String, now: C.Instant) -> [Action] {
        self.states[account] = .published(state, at: now)
        return [.publish(account: account, state)]
    }
}
