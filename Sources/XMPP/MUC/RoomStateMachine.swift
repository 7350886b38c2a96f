/// One room an account sits in, as a pure machine (XEP-0045 §7; XEP-0410 self-ping): no I/O,
/// time passed in.
///
/// - Joins without history (`<history maxstanzas='0'/>`, §7.2.14): what was missed comes
///   from the room's archive instead, after every join.
/// - Follows our nick as the room reports it (status 110, 210, 303); after a nick
///   conflict tries the nick with `_` appended.
/// - Rejoins after a lost connection, a kick (307, after a delay), a removal for shutdown
///   or technical reasons (332, 333), an error saying we are not an occupant, a failed
///   self-ping, or a join that failed for a passing reason (with backoff).
/// - Stops for good — this room only, never the account — on a ban (301), a destroyed
///   room, a members-only or password refusal, or a removal by affiliation (321, 322).
/// - Tells our own reflected messages by the ids we sent them with (XEP-0359 `origin-id`,
///   or the stanza id), never by nick.
public struct RoomStateMachine<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    /// The namespace of the join presence's `<x/>` (XEP-0045 §7.2).
    public static var namespace: String { "http://jabber.org/protocol/muc" }
    static var userNamespace: String { "http://jabber.org/protocol/muc#user" }
    static var ownerNamespace: String { "http://jabber.org/protocol/muc#owner" }

    /// Where we are with the room.
    public enum State: Hashable, Sendable {
        /// The account is not connected.
        case offline
        /// Our join presence is out; waiting for the room's answer.
        case joining(nick: String, since: Instant)
        case joined(nick: String)
        /// Out of the room; rejoining at `until`.
        case waiting(until: Instant, reason: String)
        /// Out of the room for good (until the configuration is reloaded).
        case stopped(reason: String)
    }

    /// What the owner does.
    public enum Action: Hashable, Sendable {
        /// Write this stanza (a join or leave presence).
        case send(XMLElement)
        /// We are in the room (again) as `nick`: deliveries may go, and a catch-up from the
        /// room's archive is due.
        case joined(nick: String)
        /// We are out of the room for now; deliveries wait until ``Action/joined(nick:)``.
        case left(reason: String)
        /// Out of the room for good; deliveries wait (and are listed) until a reload.
        case stopped(reason: String)
        /// Someone else entered or left the room (only reported once we are in it).
        case occupant(nick: String, joined: Bool)
        /// Ask the room whether we are still in it (XEP-0410): an IQ ping to our occupant
        /// JID; answer with ``selfPingAnswered(_:now:)``.
        case selfPing(to: JID)
        /// We created the room (status 201): accept the default configuration (an instant
        /// room, §10.1.2) so it is not left locked.
        case configureInstantRoom
    }

    /// What a message from the room is.
    public enum MessageVerdict: Hashable, Sendable {
        /// An occupant's message, by `nick`.
        case occupant(nick: String)
        /// Our own message, reflected.
        case echo
        /// Nothing for the application, for this reason (a private message, the subject sent on join…).
        case ignored(String)
        /// The room refused one of our messages for a passing reason (we are not in it, its
        /// service is unavailable): these actions rejoin, and the message is worth sending
        /// again once we are back in.
        case refusedForNow([Action])
    }

    /// A self-ping's answer (XEP-0410 §4).
    public enum SelfPingOutcome: Hashable, Sendable {
        case stillJoined
        case notJoined(String)
        /// The room's service cannot be reached; we may still be in the room.
        case unreachable(String)
    }

    public let configuration: RoomConfiguration
    public let timings: RoomTimings
    public private(set) var state: State = .offline
    /// Other occupants by nick.
    public private(set) var occupants: Set<String> = []
    /// The subject the room sends at the end of every join is not a change.
    private var awaitingJoinSubject = false
    private var lastActivity: Instant?
    private var pinging = false
    /// Failed joins in a row, for the backoff.
    private var failures = 0
    /// Occupants that announced a nick change: their next presence is no new arrival.
    private var renaming: Set<String> = []
    /// What became of a message we sent into the room.
    enum SentMessage: Sendable {
        case sent
        /// The room reflected it: it is in the room (XEP-0045 §7.2.2).
        case reflected
        /// The room answered it with an error (the bounce path decides).
        case refused
    }

    /// Ids of messages we sent into the room, to tell their reflections, and what became of
    /// each; `sentOrder` has them newest last, to forget the oldest.
    private var sentIDs: [String: SentMessage] = [:]
    private var sentOrder: [String] = []
    private var sentStart = 0
    static var rememberedSentIDs: Int { 1_024 }

    public init(configuration: RoomConfiguration, timings: RoomTimings = RoomTimings()) {
        self.configuration = configuration
        self.timings = timings
    }

    /// Our nick in the room, or the one we ask for.
    public var nick: String {
        switch self.state {
        case .joining(let nick, _), .joined(let nick): nick
        case .offline, .waiting, .stopped: self.configuration.nick
        }
    }

    public var isJoined: Bool {
        if case .joined = self.state { return true }
        return false
    }

    // MARK: - Connection

    /// The account is online (connected, or reconnected): join.
    public mutating func connected(now: Instant) -> [Action] {
        if case .stopped = self.state { return [] }
        self.failures = 0
        return self.join(nick: self.configuration.nick, now: now)
    }

    /// The connection is gone but the stream may be resumed (XEP-0198 §5), which keeps us in
    /// the room: a self-ping under way can no longer be answered; the next is due as usual.
    public mutating func connectionInterrupted() {
        self.pinging = false
    }

    /// The connection is gone: every room is left with it. Returns whether we were in the room.
    public mutating func disconnected() -> Bool {
        let wasJoined = self.isJoined
        if case .stopped = self.state { return false }
        self.state = .offline
        self.pinging = false
        self.occupants = []
        return wasJoined
    }

    /// Leaving on purpose (the room was removed from the configuration): the presence to
    /// send, if we are in the room or joining it.
    public mutating func leave() -> XMLElement? {
        defer { self.state = .stopped(reason: "left") }
        switch self.state {
        case .joining(let nick, _), .joined(let nick):
            return Presence(type: .unavailable, to: try? self.configuration.jid.withResource(nick)).element
        case .offline, .waiting, .stopped:
            return nil
        }
    }

    // MARK: - Stanzas from the room

    /// Any stanza from the room arrived: it is not quiet.
    public mutating func activity(now: Instant) {
        self.lastActivity = now
    }

    /// A presence from the room's JID (ours or an occupant's, or an error).
    public mutating func received(_ presence: Presence, now: Instant) -> [Action] {
        self.lastActivity = now
        let status = RoomStatusCodes(presence)
        let nick = presence.from?.resourcepart
        if presence.type == .error {
            return self.joinFailed(presence.error, now: now)
        }
        let isSelf = status.codes.contains(110) || (nick != nil && nick == self.nick && self.isJoined)
        guard isSelf else { return self.occupantPresence(presence, nick: nick, status: status) }
        // Out for good (banned, left): nothing the room says about us changes that.
        if case .stopped = self.state { return [] }
        switch presence.type {
        case .available:
            guard let nick else { return [] }
            let wasJoined = self.isJoined
            self.state = .joined(nick: nick)
            guard !wasJoined else { return [] }
            self.failures = 0
            self.pinging = false
            self.awaitingJoinSubject = true
            var actions: [Action] = [.joined(nick: nick)]
            if status.codes.contains(201) { actions.append(.configureInstantRoom) }
            return actions
        case .unavailable:
            return self.removed(status, now: now)
        case .subscribe, .subscribed, .unsubscribe, .unsubscribed, .probe, .error:
            return []
        }
    }

    /// A message from the room's JID (a live groupchat message, a private message, an
    /// error). Archive results are read elsewhere.
    public mutating func received(_ message: Message, now: Instant) -> MessageVerdict {
        self.lastActivity = now
        let nick = message.from?.resourcepart
        switch message.type {
        case .error:
            if let id = message.id, self.sentIDs[id] == .sent { self.sentIDs[id] = .refused }
            guard let condition = message.error?.condition, Self.refusesForNow(condition) else { return .ignored("error") }
            // A room answers a message from a non-occupant with not-acceptable (§7.4); a
            // restarting service with service-unavailable or remote-server-*.
            guard self.isJoined || self.isJoining else { return .refusedForNow([]) }
            return .refusedForNow(self.rejoin(reason: "the room refused a message: \(condition.rawValue)", now: now))
        case .chat, .normal, .headline:
            return .ignored(nick == nil ? "a message from the room itself" : "a private message from occupant \(nick ?? "")")
        case .groupchat:
            break
        }
        if let id = OriginID.of(message) ?? message.id, self.sentIDs[id] != nil {
            self.sentIDs[id] = .reflected
            return .echo
        }
        guard let nick else {
            self.awaitingJoinSubject = self.awaitingJoinSubject && message.subject == nil
            return .ignored("a message from the room itself")
        }
        if message.body == nil, message.subject != nil, self.awaitingJoinSubject {
            self.awaitingJoinSubject = false
            return .ignored("the subject sent on joining")
        }
        if self.awaitingJoinSubject, message.extensions.contains(where: { $0.name == "delay" && $0.namespace == "urn:xmpp:delay" }) {
            return .ignored("room history (gaps are filled from the room's archive)")
        }
        return .occupant(nick: nick)
    }

    /// We are about to send a message with this id (and origin-id) into the room. One the
    /// room refused before is sent again: it waits for its reflection anew (its last
    /// refusal does not settle this attempt).
    public mutating func sending(id: String) {
        switch self.sentIDs[id] {
        case .sent, .reflected:
            return
        case .refused:
            // The newest again: remembered as long as any message sent now.
            if let index = self.sentOrder[self.sentStart...].firstIndex(of: id) { self.sentOrder.remove(at: index) }
        case nil:
            break
        }
        self.sentIDs[id] = .sent
        self.sentOrder.append(id)
        if self.sentOrder.count - self.sentStart > Self.rememberedSentIDs {
            self.sentIDs.removeValue(forKey: self.sentOrder[self.sentStart])
            self.sentStart += 1
            if self.sentStart > Self.rememberedSentIDs {
                self.sentOrder.removeFirst(self.sentStart)
                self.sentStart = 0
            }
        }
    }

    /// Whether the room reflected our message `id` (among the last
    /// ``rememberedSentIDs`` we sent): it reached the room and its occupants.
    public func reflected(_ id: String) -> Bool {
        self.sentIDs[id] == .reflected
    }

    /// Whether the room reflected our message `id` or answered it with an error: either way
    /// nothing more will come for it (an id we no longer remember counts as settled).
    public func settled(_ id: String) -> Bool {
        self.sentIDs[id] != .sent
    }

    // MARK: - Time

    /// When ``timerFired(now:)`` is next due, if at all.
    public var nextDeadline: Instant? {
        switch self.state {
        case .waiting(let until, _): return until
        case .joining(_, let since): return since.advanced(by: self.timings.pingTimeout)
        case .joined: return self.pinging ? nil : self.lastActivity?.advanced(by: self.timings.pingInterval)
        case .offline, .stopped: return nil
        }
    }

    public mutating func timerFired(now: Instant) -> [Action] {
        switch self.state {
        case .waiting(let until, _) where until <= now:
            return self.join(nick: self.configuration.nick, now: now)
        case .joining(_, let since) where since.advanced(by: self.timings.pingTimeout) <= now:
            self.failures += 1
            return self.wait(reason: "the room did not answer our join", now: now)
        case .joined(let nick):
            guard !self.pinging, let last = self.lastActivity, last.advanced(by: self.timings.pingInterval) <= now,
                let occupantJID = try? self.configuration.jid.withResource(nick)
            else { return [] }
            self.pinging = true
            return [.selfPing(to: occupantJID)]
        case .offline, .waiting, .joining, .stopped:
            return []
        }
    }

    /// How a self-ping was answered: a result, a stanza error condition, or no answer (nil
    /// condition and `answered` false). XEP-0410 §4.
    public static func selfPingOutcome(answered: Bool, condition: StanzaError.Condition?) -> SelfPingOutcome {
        guard answered else { return .notJoined("no answer to a self-ping") }
        guard let condition else { return .stillJoined }
        switch condition {
        case .serviceUnavailable, .featureNotImplemented:
            // Our own client's refusal, forwarded by the room: we are in it.
            return .stillJoined
        case .remoteServerNotFound, .remoteServerTimeout:
            return .unreachable("the room's service cannot be reached (\(condition.rawValue))")
        case .badRequest, .conflict, .forbidden, .gone, .internalServerError, .itemNotFound, .jidMalformed, .notAcceptable, .notAllowed,
            .notAuthorized, .policyViolation, .recipientUnavailable, .redirect, .registrationRequired, .resourceConstraint,
            .subscriptionRequired, .undefinedCondition, .unexpectedRequest:
            return .notJoined("self-ping answered \(condition.rawValue)")
        }
    }

    public mutating func selfPingAnswered(_ outcome: SelfPingOutcome, now: Instant) -> [Action] {
        self.pinging = false
        guard self.isJoined else { return [] }
        switch outcome {
        case .stillJoined, .unreachable:
            self.lastActivity = now
            return []
        case .notJoined(let reason):
            return self.rejoin(reason: reason, now: now)
        }
    }

    /// Conditions a room gives our message that say "not now" rather than "never": we are
    /// not (or no longer) an occupant, or the room's service cannot be reached.
    static func refusesForNow(_ condition: StanzaError.Condition) -> Bool {
        switch condition {
        case .notAcceptable, .serviceUnavailable, .remoteServerNotFound, .remoteServerTimeout, .recipientUnavailable, .itemNotFound,
            .internalServerError, .resourceConstraint:
            return true
        case .badRequest, .conflict, .featureNotImplemented, .forbidden, .gone, .jidMalformed, .notAllowed, .notAuthorized, .policyViolation,
            .redirect, .registrationRequired, .subscriptionRequired, .undefinedCondition, .unexpectedRequest:
            return false
        }
    }

    // MARK: - Private

    private var isJoining: Bool {
        if case .joining = self.state { return true }
        return false
    }

    private mutating func join(nick: String, now: Instant) -> [Action] {
        self.state = .joining(nick: nick, since: now)
        self.occupants = []
        self.renaming = []
        self.pinging = false
        guard let to = try? self.configuration.jid.withResource(nick) else {
            self.state = .stopped(reason: "'\(nick)' is not a valid nick")
            return [.stopped(reason: "'\(nick)' is not a valid nick")]
        }
        var x = XMLElement(name: "x", namespace: Self.namespace)
        x.append(XMLElement(name: "history", namespace: Self.namespace, attributes: [XMLAttribute(name: "maxstanzas", value: "0")]))
        if let password = self.configuration.password {
            var element = XMLElement(name: "password", namespace: Self.namespace)
            element.append(text: password)
            x.append(element)
        }
        var presence = Presence(to: to)
        presence.extensions.append(x)
        return [.send(presence.element)]
    }

    private mutating func rejoin(reason: String, now: Instant) -> [Action] {
        [.left(reason: reason)] + self.join(nick: self.configuration.nick, now: now)
    }

    private mutating func wait(reason: String, now: Instant) -> [Action] {
        var delay = self.timings.retryDelay
        for _ in 1..<max(self.failures, 1) where delay < self.timings.maximumRetryDelay { delay *= 2 }
        delay = min(delay, self.timings.maximumRetryDelay)
        return self.wait(reason: reason, for: delay, now: now)
    }

    private mutating func wait(reason: String, for delay: Duration, now: Instant) -> [Action] {
        let wasJoined = self.isJoined
        self.state = .waiting(until: now.advanced(by: delay), reason: reason)
        self.occupants = []
        self.pinging = false
        return wasJoined ? [.left(reason: "\(reason); rejoining in \(delay)")] : []
    }

    private mutating func stop(_ reason: String) -> [Action] {
        self.state = .stopped(reason: reason)
        self.occupants = []
        return [.stopped(reason: reason)]
    }

    /// Our join was refused (§7.2.6–§7.2.11), or some other error presence came.
    private mutating func joinFailed(_ error: StanzaError?, now: Instant) -> [Action] {
        guard case .joining(let nick, _) = self.state else { return [] }
        guard let condition = error?.condition else {
            self.failures += 1
            return self.wait(reason: "join refused, no reason given", now: now)
        }
        switch condition {
        case .conflict:
            let attempt = nick.count - self.configuration.nick.count + 1
            guard attempt < self.timings.nickAttempts else { return self.stop("nick '\(self.configuration.nick)' and \(attempt - 1) variants are taken") }
            return self.join(nick: nick + "_", now: now)
        case .notAuthorized: return self.stop("the room needs a password, or ours is wrong")
        case .forbidden: return self.stop("banned from the room")
        case .registrationRequired: return self.stop("members-only room and the account is not a member")
        case .itemNotFound: return self.stop("the room does not exist and cannot be created")
        case .gone, .redirect: return self.stop("the room is gone\(error?.text.map { ": \($0)" } ?? "")")
        case .notAllowed: return self.stop("the service does not let this account create the room")
        case .jidMalformed, .notAcceptable: return self.stop("the room refused the nick '\(nick)'")
        case .badRequest, .featureNotImplemented, .internalServerError, .policyViolation, .recipientUnavailable, .remoteServerNotFound,
            .remoteServerTimeout, .resourceConstraint, .serviceUnavailable, .subscriptionRequired, .undefinedCondition, .unexpectedRequest:
            self.failures += 1
            return self.wait(reason: "join refused: \(condition.rawValue)\(error?.text.map { " (\($0))" } ?? "")", now: now)
        }
    }

    /// Our own unavailable presence: why we are out of the room (§7.2.6, §9.1–§9.4, §10.9).
    private mutating func removed(_ status: RoomStatusCodes, now: Instant) -> [Action] {
        let codes = status.codes
        if codes.contains(303), let newNick = status.newNick {
            // Our nick changes; the available presence under the new one follows.
            self.state = .joined(nick: newNick)
            return []
        }
        if let destroyed = status.destroyed { return self.stop("the room was destroyed\(destroyed.isEmpty ? "" : ": \(destroyed)")") }
        if codes.contains(301) { return self.stop("banned from the room\(status.reason.map { ": \($0)" } ?? "")") }
        if codes.contains(321) { return self.stop("removed from the room: our affiliation changed") }
        if codes.contains(322) { return self.stop("removed from the room: it is members-only now") }
        if codes.contains(307) {
            return self.wait(reason: "kicked from the room\(status.reason.map { ": \($0)" } ?? "")", for: self.timings.rejoinAfterKick, now: now)
        }
        self.failures += 1
        if codes.contains(332) { return self.wait(reason: "the room's service is shutting down", now: now) }
        if codes.contains(333) { return self.wait(reason: "removed from the room for technical reasons", now: now) }
        return self.wait(reason: "the room says we left", now: now)
    }

    private mutating func occupantPresence(_ presence: Presence, nick: String?, status: RoomStatusCodes) -> [Action] {
        guard let nick else { return [] }
        switch presence.type {
        case .available:
            guard self.occupants.insert(nick).inserted else { return [] }
            if self.renaming.remove(nick) != nil { return [] }
            return self.isJoined ? [.occupant(nick: nick, joined: true)] : []
        case .unavailable:
            guard self.occupants.remove(nick) != nil else { return [] }
            if status.codes.contains(303), let newNick = status.newNick {
                self.renaming.insert(newNick)
                return []
            }
            return self.isJoined ? [.occupant(nick: nick, joined: false)] : []
        case .subscribe, .subscribed, .unsubscribe, .unsubscribed, .probe, .error:
            return []
        }
    }
}
