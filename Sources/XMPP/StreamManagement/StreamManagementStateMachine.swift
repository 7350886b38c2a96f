/// Stream management (XEP-0198, `urn:xmpp:sm:3`) as a pure state machine: counting,
/// acknowledgements and resumption, with no I/O and no clock.
///
/// - Outbound: counting starts when `<enable/>` is sent (§4); every stanza sent after that
///   is numbered and kept until the server's `<a h>` (or `<resumed h>`) covers it. `h` is
///   the count of stanzas the server handled, modulo 2³² (§5).
/// - Inbound: counting starts when `<enabled/>` arrives (or continues from the stored `h`
///   on resumption). A stanza is *handled* only when the owner says so (the bridge: after
///   the journal commit that holds it); `h` is the in-order watermark, so a stanza handled
///   early waits for the ones before it.
/// - Acknowledgements are coalesced: `<r/>` only marks an answer as owed; the owner takes
///   it with ``takeAck(deferringBelow:)`` once per read batch or after handled stanzas
///   advance (or later, once enough is handled or the owner's delay ends), and an
///   answer that reported less than was received is sent again once the rest is handled
///   (an unrequested `<a/>` is allowed at any time, §4).
/// - Resumption (§5): `<resumed h>` releases what the server counted and returns the rest
///   to resend, in order; `<failed h>` (Prosody puts `h` there) releases what it counted.
public struct StreamManagementStateMachine: Sendable {
    public static let namespace = "urn:xmpp:sm:3"

    /// What survives a connection (and, persisted, a restart) for resumption.
    public struct Resumption: Hashable, Sendable {
        public var id: String
        public var location: String?
        /// Inbound stanzas handled (our `h`).
        public var handled: UInt32
        /// Outbound stanzas the server acknowledged so far, and those it did not, in order.
        public var acknowledged: UInt32
        public var unacknowledged: [XMLElement]

        public init(id: String, location: String?, handled: UInt32, acknowledged: UInt32, unacknowledged: [XMLElement]) {
            self.id = id
            self.location = location
            self.handled = handled
            self.acknowledged = acknowledged
            self.unacknowledged = unacknowledged
        }
    }

    public enum State: Hashable, Sendable {
        case inactive
        /// `<enable/>` sent, no answer yet.
        case enabling
        /// `<resume/>` sent for `id`, no answer yet.
        case resuming(id: String)
        /// Counting and acknowledging; `id` is nil when the server does not allow resumption.
        case active(id: String?, location: String?)
    }

    public enum Action: Hashable, Sendable {
        /// The server enabled stream management (resumable when `id` is set).
        case enabled(id: String?, location: String?, maxSeconds: Int?)
        /// The server refused to enable it; carry on without.
        case enableFailed(condition: String)
        /// The previous session is back: resend these stanzas, in order.
        case resumed(resend: [XMLElement])
        /// The previous session is gone: start afresh (bind, enable); these stanzas, which
        /// the server did not count, must be sent again in the new session.
        case resumeFailed(condition: String, unacknowledged: [XMLElement])
        /// Outbound stanzas up to this number (inclusive, modulo 2³²) are acknowledged.
        case acknowledged(through: UInt32, count: Int)
        /// The server broke the protocol (acknowledged more than we sent); the stream
        /// should be closed with this condition.
        case protocolError(String)
    }

    public private(set) var state: State = .inactive
    /// Inbound stanzas received since counting began (modulo 2³²).
    public private(set) var received: UInt32 = 0
    /// Inbound stanzas handled, in order: our `h`.
    public private(set) var handled: UInt32 = 0
    /// Outbound stanzas numbered so far, and the last the server acknowledged.
    public private(set) var sent: UInt32 = 0
    public private(set) var acknowledged: UInt32 = 0
    private var unacknowledged: [XMLElement] = []
    /// An inherited session (``init(inheriting:)``): the outbound count is the server's.
    private var outboundUnknown = false
    private var handledEarly: Set<UInt32> = []
    private var ackOwed = false
    /// The last `<a/>` reported less than had been received: report again once more is handled.
    private var reportedShort = false
    private var lastAckSent: UInt32?

    public init() {}

    public var isCounting: Bool {
        switch self.state {
        case .enabling, .active: true
        case .inactive, .resuming: false
        }
    }

    /// Outbound stanzas not yet acknowledged.
    public var pending: [XMLElement] { self.unacknowledged }

    // MARK: Starting

    /// A session stored by an earlier process, to resume after a restart: counters as they
    /// were, and the ids of the stanzas the server had not acknowledged, in order (the
    /// stanzas themselves are not kept; after `<resumed h>` the ids the server counted are
    /// known delivered, and the rest are the owner's to send again).
    public init(restoring stored: StoredSession) {
        self.state = .active(id: stored.id, location: stored.location)
        self.received = stored.handled
        self.handled = stored.handled
        self.acknowledged = stored.acknowledged
        self.sent = stored.acknowledged &+ UInt32(truncatingIfNeeded: stored.unacknowledgedIDs.count)
        self.unacknowledged = stored.unacknowledgedIDs.map { id in
            var placeholder = XMLElement(name: "message", namespace: XMPPNamespace.client)
            placeholder[attribute: "id"] = id
            return placeholder
        }
    }

    /// A session another process left (XEP-0198 §5: a resumption may come from a new
    /// connection) whose outbound positions went with it: resumed with the inbound count
    /// (`handled`) alone, the server's `<resumed h>` then taken as the outbound count as it
    /// stands, nothing sent again (the owner settles what the other may have sent).
    public init(inheriting stored: StoredSession) {
        self.state = .active(id: stored.id, location: stored.location)
        self.received = stored.handled
        self.handled = stored.handled
        self.outboundUnknown = true
    }

    /// The persisted form of a resumable session (ids instead of stanzas).
    public struct StoredSession: Hashable, Sendable, Codable {
        public var id: String
        public var location: String?
        public var handled: UInt32
        public var acknowledged: UInt32
        public var unacknowledgedIDs: [String]
        /// The full JID the session was bound to (a resumed stream keeps it); set by the owner.
        public var jid: String?
        /// Ids the server acknowledged since the state was last handed out (not part of the
        /// stored form): the owner marks them done in the same write, so the stored session
        /// never counts as acknowledged what its queue would send again.
        public var acknowledgedIDs: [String] = []

        public init(id: String, location: String?, handled: UInt32, acknowledged: UInt32, unacknowledgedIDs: [String], jid: String? = nil) {
            self.jid = jid
            self.id = id
            self.location = location
            self.handled = handled
            self.acknowledged = acknowledged
            self.unacknowledgedIDs = unacknowledgedIDs
        }
    }

    /// What to persist now; nil when there is no resumable session.
    public var storedSession: StoredSession? {
        self.resumption.map {
            StoredSession(
                id: $0.id, location: $0.location, handled: $0.handled, acknowledged: $0.acknowledged,
                unacknowledgedIDs: $0.unacknowledged.map { $0[attribute: "id"] ?? "" }
            )
        }
    }

    /// `<enable resume='true'/>` (§3): outbound counting starts now.
    public mutating func enable(resume: Bool) -> XMLElement {
        self.state = .enabling
        self.sent = 0
        self.acknowledged = 0
        self.unacknowledged = []
        self.outboundUnknown = false
        var element = XMLElement(name: "enable", namespace: Self.namespace)
        if resume { element[attribute: "resume"] = "true" }
        return element
    }

    /// `<resume previd h/>` (§5) for a stored session.
    public mutating func resume(_ previous: Resumption) -> XMLElement {
        self.state = .resuming(id: previous.id)
        self.received = previous.handled
        self.handled = previous.handled
        self.handledEarly = []
        self.acknowledged = previous.acknowledged
        self.sent = previous.acknowledged &+ UInt32(truncatingIfNeeded: previous.unacknowledged.count)
        self.unacknowledged = previous.unacknowledged
        var element = XMLElement(name: "resume", namespace: Self.namespace)
        element[attribute: "previd"] = previous.id
        element[attribute: "h"] = String(previous.handled)
        return element
    }

    /// What to store to resume later; nil unless resumable.
    public var resumption: Resumption? {
        switch self.state {
        case .active(let id?, let location):
            return Resumption(id: id, location: location, handled: self.handled, acknowledged: self.acknowledged, unacknowledged: self.unacknowledged)
        case .resuming(let id):
            return Resumption(id: id, location: nil, handled: self.handled, acknowledged: self.acknowledged, unacknowledged: self.unacknowledged)
        case .inactive, .enabling, .active(nil, _):
            return nil
        }
    }

    /// The negotiation sent `<resume/>` for this session (the counters stay as they are);
    /// false when there is nothing to resume.
    public mutating func resumeSent() -> Bool {
        switch self.state {
        case .active(let id?, _), .resuming(let id):
            self.state = .resuming(id: id)
            return true
        case .inactive, .enabling, .active(nil, _):
            return false
        }
    }

    // MARK: Inbound

    /// Handles an element in the SM namespace; nil for anything else (a stanza, which the
    /// owner counts with ``stanzaReceived()``).
    public mutating func received(_ element: XMLElement) -> [Action]? {
        guard element.namespace == Self.namespace else { return nil }
        switch element.name {
        case "enabled":
            guard case .enabling = self.state else { return [.protocolError("unexpected <enabled/>")] }
            let resumable = ["true", "1"].contains(element[attribute: "resume"] ?? "")
            let id = resumable ? element[attribute: "id"] : nil
            let location = element[attribute: "location"]
            self.state = .active(id: id, location: location)
            self.received = 0
            self.handled = 0
            self.handledEarly = []
            self.lastAckSent = nil
            self.reportedShort = false
            return [.enabled(id: id, location: location, maxSeconds: element[attribute: "max"].flatMap { Int($0) })]
        case "resumed":
            guard case .resuming(let id) = self.state else { return [.protocolError("unexpected <resumed/>")] }
            guard let h = element[attribute: "h"].flatMap({ UInt32($0) }) else { return [.protocolError("<resumed/> without a valid h")] }
            var actions: [Action] = []
            if self.outboundUnknown {
                (self.acknowledged, self.sent, self.outboundUnknown) = (h, h, false)
            } else if let release = self.release(through: h) {
                actions.append(release)
            } else {
                return [.protocolError("handled-count-too-high")]
            }
            self.state = .active(id: id, location: nil)
            // Unacknowledged stanzas keep their numbers: resending them counts them anew.
            let resend = self.unacknowledged
            self.sent = self.acknowledged
            self.unacknowledged = []
            actions.append(.resumed(resend: resend))
            return actions
        case "failed":
            let condition = element.elements.first?.name ?? "undefined-condition"
            var actions: [Action] = []
            if !self.outboundUnknown, let h = element[attribute: "h"].flatMap({ UInt32($0) }), let release = self.release(through: h) { actions.append(release) }
            self.outboundUnknown = false
            switch self.state {
            case .enabling:
                self.state = .inactive
                actions.append(.enableFailed(condition: condition))
            case .resuming:
                let rest = self.unacknowledged
                self.state = .inactive
                self.unacknowledged = []
                self.sent = 0
                self.acknowledged = 0
                actions.append(.resumeFailed(condition: condition, unacknowledged: rest))
            case .inactive, .active:
                actions.append(.protocolError("unexpected <failed/>"))
            }
            return actions
        case "r":
            guard case .active = self.state else { return [] }
            self.ackOwed = true
            return []
        case "a":
            guard self.isCounting, let h = element[attribute: "h"].flatMap({ UInt32($0) }) else { return [] }
            guard let release = self.release(through: h) else { return [.protocolError("handled-count-too-high")] }
            // Even an ack that releases nothing answers a waiting `<r/>`.
            return [release]
        default:
            return []
        }
    }

    /// A stanza arrived; its inbound number (to pass to ``handled(_:)``), or nil when not counting.
    public mutating func stanzaReceived() -> UInt32? {
        guard case .active = self.state else { return nil }
        self.received &+= 1
        return self.received
    }

    /// The owner is done with inbound stanza `number` (durably, for the bridge).
    public mutating func handled(_ number: UInt32) {
        guard case .active = self.state else { return }
        let ahead = number &- self.handled
        guard ahead != 0, ahead <= self.received &- self.handled else { return }  // old, or never received
        if ahead == 1 {
            self.handled = number
            while self.handledEarly.remove(self.handled &+ 1) != nil { self.handled &+= 1 }
        } else {
            self.handledEarly.insert(number)
        }
    }

    /// Whether an `<a h/>` is owed: the server asked, or an earlier answer fell short of
    /// what had been received and more is handled since.
    public var acknowledgementOwed: Bool {
        guard case .active = self.state else { return false }
        return self.ackOwed || (self.reportedShort && self.lastAckSent != self.handled)
    }

    /// `<a h/>` to send now, if one is owed. With `deferringBelow`, an answer that would
    /// report fewer than that many newly handled stanzas is held back (it stays owed, for
    /// the owner to take later): a server that asks after every stanza gets one answer per
    /// batch instead (§4 lets it be answered at any time; Prosody asks again only once
    /// answered).
    public mutating func takeAck(deferringBelow batch: UInt32 = 0) -> XMLElement? {
        guard self.acknowledgementOwed else { return nil }
        if batch > 0, self.handled &- (self.lastAckSent ?? 0) < batch { return nil }
        self.ackOwed = false
        self.lastAckSent = self.handled
        self.reportedShort = self.handled != self.received
        var element = XMLElement(name: "a", namespace: Self.namespace)
        element[attribute: "h"] = String(self.handled)
        return element
    }

    // MARK: Outbound

    /// A stanza is being sent; its outbound number, or nil when not counting.
    public mutating func stanzaSent(_ element: XMLElement) -> UInt32? {
        guard self.isCounting else { return nil }
        self.sent &+= 1
        self.unacknowledged.append(element)
        return self.sent
    }

    /// `<r/>`: ask the server how much it handled.
    public func requestAck() -> XMLElement {
        XMLElement(name: "r", namespace: Self.namespace)
    }

    /// Releases outbound stanzas through `h`; nil when `h` covers more than was sent.
    private mutating func release(through h: UInt32) -> Action? {
        let count = h &- self.acknowledged
        guard count <= UInt32(truncatingIfNeeded: self.unacknowledged.count) else { return nil }
        self.unacknowledged.removeFirst(Int(count))
        self.acknowledged = h
        return .acknowledged(through: h, count: Int(count))
    }
}
