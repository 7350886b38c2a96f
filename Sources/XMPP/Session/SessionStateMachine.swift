import StanzaIdentity

/// What a bound client session does with each stanza it receives (RFC 6120 §8, §10;
/// RFC 6121; XEP-0030, XEP-0092, XEP-0199, XEP-0280). Pure: no I/O, no clock reads.
///
/// Incoming requests we implement are answered; any other get/set gets
/// `service-unavailable` (RFC 6120 §8.4), never silence. Replies are matched to our
/// requests only when they come from where the request went. Roster pushes and carbon
/// copies are accepted only from our own bare JID.
public struct SessionStateMachine<Instant: InstantProtocol & Sendable>: Sendable {
    /// How to treat incoming subscription requests (RFC 6121 §3.1.3).
    public enum SubscriptionPolicy: String, Hashable, Sendable, CaseIterable {
        /// Never approve automatically; report the request.
        case manual
        /// Approve contacts already in the roster; report the rest (default).
        case acceptKnown = "accept-known"
        /// Approve everyone. Only for bots that must be reachable by anyone.
        case acceptAll = "accept-all"
    }

    /// Who we say we are (XEP-0030, XEP-0092, XEP-0115) and how we treat subscription requests.
    public struct Configuration: Sendable {
        public var capabilities: EntityCapabilities
        public var capabilitiesNode: String
        public var softwareName: String
        public var softwareVersion: String
        public var subscriptionPolicy: SubscriptionPolicy

        /// Who the application is: its name and version (XEP-0092), its caps node (a URL of
        /// the project, XEP-0115 §4), its identity and features (``EntityCapabilities/session(named:category:type:)``
        /// named after it unless given).
        public init(
            softwareName: String,
            softwareVersion: String,
            capabilitiesNode: String,
            capabilities: EntityCapabilities? = nil,
            subscriptionPolicy: SubscriptionPolicy = .acceptKnown
        ) {
            self.capabilities = capabilities ?? .session(named: softwareName)
            self.capabilitiesNode = capabilitiesNode
            self.softwareName = softwareName
            self.softwareVersion = softwareVersion
            self.subscriptionPolicy = subscriptionPolicy
        }
    }

    /// What the session must do after a stanza arrived.
    public indirect enum Action: Sendable {
        /// Write this stanza.
        case send(XMLElement)
        /// The answer to our request `id` arrived.
        case completeRequest(id: String, IQ)
        /// A message for the application; `carbon` says whether it is a copy (XEP-0280).
        case emitMessage(Message, carbon: CarbonDirection?)
        /// A contact's presence changed; `best` is the bare JID's aggregate.
        case presenceChanged(Presence, best: Presence?)
        /// Someone asks to see our presence and policy did not approve it.
        case subscriptionRequested(from: JID, Presence)
        /// A subscription state change from a contact (subscribed, unsubscribe, unsubscribed).
        case subscriptionChanged(Presence)
        /// The roster changed by a push.
        case rosterChanged(Roster.PushOutcome)
        /// Dropped, with the reason to log (spoofed reply, forged carbon, stranger's push, …).
        case ignored(String)
        /// A room reflected our own message `id` and gave it this stanza-id (XEP-0359 §6).
        case copyStanzaID(room: JID, id: String, stanzaID: StanzaID)
    }

    public let configuration: Configuration
    public private(set) var ownJID: JID
    public private(set) var roster = Roster()
    public private(set) var presences = PresenceBook()
    private var tracker: IQTracker<Instant>
    /// The roster fetch under way; its result is applied in stream order with pushes.
    private var rosterFetchID: String?
    /// Whether the roster was fetched on this connection (an empty roster is then real).
    public private(set) var rosterLoaded = false
    /// Presences tracked at most (contacts × resources), so strangers cannot grow memory.
    public static var maximumTrackedPresences: Int { 10_000 }

    public init(ownJID: JID, configuration: Configuration) {
        self.ownJID = ownJID
        self.configuration = configuration
        self.tracker = IQTracker(ownJID: ownJID)
    }

    // MARK: - Our side

    /// A new stream was bound (first connect or after a reconnect): presence is stale.
    public mutating func bound(as jid: JID) {
        self.ownJID = jid
        self.tracker.ownJID = jid
        self.presences = PresenceBook()
    }

    /// We sent request `id` to `to` (nil: our server); it times out at `deadline`.
    public mutating func requestSent(id: String, to: JID?, deadline: Instant) {
        self.tracker.requestSent(id: id, to: to, deadline: deadline)
    }

    /// The earliest deadline of the requests still waiting, for the owner's one timer.
    public var nextRequestDeadline: Instant? { self.tracker.nextDeadline }

    /// Requests whose time is up; their callers get a timeout.
    public mutating func expireRequests(now: Instant) -> [String] {
        self.tracker.expire(now: now)
    }

    /// The connection ended: every outstanding request fails.
    public mutating func connectionLost() -> [String] {
        self.presences = PresenceBook()
        self.rosterLoaded = false
        return self.tracker.cancelAll()
    }

    /// A roster fetch answered (RFC 6121 §2.1.3).
    public mutating func rosterReceived(_ iq: IQ) throws(StanzaParseError) {
        try self.roster.applyResult(iq)
    }

    /// Request `id` is a roster fetch: its result replaces the roster when it arrives, so a
    /// push processed before it is not overwritten by an older snapshot afterwards.
    public mutating func rosterFetchSent(id: String) {
        self.rosterFetchID = id
    }

    /// The earliest request deadline, for the owner's timer.
    public var nextDeadline: Instant? { self.tracker.nextDeadline }

    // MARK: - Incoming

    /// Decides what to do with one incoming first-level element.
    public mutating func received(_ element: XMLElement) -> [Action] {
        guard element.namespace == XMPPNamespace.client else {
            return [.ignored("non-stanza element <\(element.name)> in \(element.namespace)")]
        }
        switch element.name {
        case "iq": return self.receivedIQ(element)
        case "message": return self.receivedMessage(element)
        case "presence": return self.receivedPresence(element)
        default: return [.ignored("unknown stanza <\(element.name)>")]
        }
    }

    private mutating func receivedIQ(_ element: XMLElement) -> [Action] {
        let iq: IQ
        do {
            iq = try IQ(element: element)
        } catch {
            return self.reject(element, error)
        }
        switch iq.type {
        case .result, .error:
            switch self.tracker.responseReceived(iq) {
            case .matched(let id):
                if id == self.rosterFetchID {
                    self.rosterFetchID = nil
                    if iq.type == .result {
                        do {
                            try self.roster.applyResult(iq)
                            self.rosterLoaded = true
                        } catch {
                            return [.completeRequest(id: id, iq), .ignored("unreadable roster: \(error)")]
                        }
                    }
                }
                return [.completeRequest(id: id, iq)]
            case .spoofed(let id, let from): return [.ignored("reply to \(id) from \(from?.description ?? "nobody"), not from where it was sent")]
            case .unknown(let id): return [.ignored("reply to unknown request \(id)")]
            }
        case .get, .set:
            return self.answer(iq)
        }
    }

    private mutating func answer(_ iq: IQ) -> [Action] {
        guard let payload = iq.payload else { return [.send(iq.errorReply(StanzaError(.badRequest)).element)] }
        switch (iq.type, payload.namespace, payload.name) {
        case (.get, "urn:xmpp:ping", "ping"):
            return [.send(iq.result().element)]
        case (.get, "http://jabber.org/protocol/disco#info", "query"):
            let node = payload[attribute: "node"]
            let known = node == nil || node == "\(self.configuration.capabilitiesNode)#\(self.configuration.capabilities.ver)"
            guard known else { return [.send(iq.errorReply(StanzaError(.itemNotFound)).element)] }
            return [.send(iq.result(payload: self.configuration.capabilities.discoInfoResult(node: node)).element)]
        case (.get, "jabber:iq:version", "query"):
            var query = XMLElement(name: "query", namespace: "jabber:iq:version")
            for (name, value) in [("name", self.configuration.softwareName), ("version", self.configuration.softwareVersion)] {
                var child = XMLElement(name: name, namespace: "jabber:iq:version")
                child.append(text: value)
                query.append(child)
            }
            return [.send(iq.result(payload: query).element)]
        case (.set, Roster.namespace, "query"):
            let outcome = self.roster.applyPush(iq, ownJID: self.ownJID)
            switch outcome {
            case .applied, .removed:
                return [.send(iq.result().element), .rosterChanged(outcome)]
            case .rejected(let reason):
                // RFC 6121 §2.1.6: a push not from our account is ignored (an error reply is allowed too).
                return [.send(iq.errorReply(StanzaError(.serviceUnavailable)).element), .ignored("roster push rejected: \(reason)")]
            }
        default:
            return [.send(iq.errorReply(StanzaError(.serviceUnavailable)).element)]
        }
    }

    private mutating func receivedMessage(_ element: XMLElement) -> [Action] {
        let message: Message
        do {
            message = try Message(element: element)
        } catch {
            return self.reject(element, error)
        }
        switch CarbonFilter.classify(message, ownJID: self.ownJID) {
        case .notCarbon: return [.emitMessage(message, carbon: nil)]
        case .received(let inner): return [.emitMessage(inner, carbon: .received)]
        case .sent(let inner): return [.emitMessage(inner, carbon: .sent)]
        case .forged(let from): return [.ignored("forged carbon copy from \(from?.description ?? "nobody")")]
        }
    }

    private mutating func receivedPresence(_ element: XMLElement) -> [Action] {
        let presence: Presence
        do {
            presence = try Presence(element: element)
        } catch {
            return self.reject(element, error)
        }
        guard let from = presence.from else { return [.ignored("presence without from")] }
        switch presence.type {
        case .available, .unavailable:
            if presence.type == .available, self.presences.trackedCount >= Self.maximumTrackedPresences, !self.presences.isTracking(from) {
                return [.ignored("presence from \(from): already tracking \(Self.maximumTrackedPresences)")]
            }
            guard let change = self.presences.update(presence) else { return [] }
            return [.presenceChanged(presence, best: change.best)]
        case .subscribe:
            let known = self.roster.items[from.bare] != nil
            let approve: Bool
            switch self.configuration.subscriptionPolicy {
            case .manual: approve = false
            case .acceptKnown: approve = known
            case .acceptAll: approve = true
            }
            guard approve else { return [.subscriptionRequested(from: from.bare, presence)] }
            return [.send(Presence(type: .subscribed, to: from.bare).element)]
        case .subscribed, .unsubscribe, .unsubscribed:
            return [.subscriptionChanged(presence)]
        case .probe, .error:
            return [.ignored("presence \(presence.type.rawValue) from \(from)")]
        }
    }

    /// A stanza we cannot read: requests get an error reply, the rest is dropped.
    private func reject(_ element: XMLElement, _ error: StanzaParseError) -> [Action] {
        let type = element[attribute: "type"]
        guard element.name == "iq", type == "get" || type == "set", let id = element[attribute: "id"] else {
            return [.ignored("unreadable <\(element.name)>: \(error)")]
        }
        var reply = XMLElement(
            name: "iq", namespace: XMPPNamespace.client,
            attributes: [XMLAttribute(name: "type", value: "error"), XMLAttribute(name: "id", value: id)]
        )
        if let from = element[attribute: "from"], (try? JID(from)) != nil { reply[attribute: "to"] = from }
        reply.append(error.stanzaError.element)
        return [.send(reply), .ignored("unreadable request: \(error)")]
    }
}
