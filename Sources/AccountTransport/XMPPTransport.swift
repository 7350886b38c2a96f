import Logging
import NIOConcurrencyHelpers
import NIOCore
import OMEMO
import ServiceLifecycle
import TransportCore
import XMPP
import XMPPMapping

/// The XMPP transport: one per configured account, an adapter over ``XMPPSession``.
/// Incoming chat, normal and headline messages with a body become ``InboundMessage``s
/// from the sender's bare JID; deliveries are sent as messages carrying the relay marker
/// and count as delivered once the server took them (acknowledged, or a ping's round trip).
public final class XMPPTransport: Transport, PresencePublishing, RosterKeeping, RoomKeeping, TextFileSharing, VCardFetching {
    public let name: String
    let session: XMPPSession<EventLoopClock>
    let handler: any TransportEventHandler
    private let bridgeID: String
    private let deliveryTimeout: Duration
    private let reuploader: FileReuploader?
    let logger: Logger
    /// The event loop the session's connections use; as a task executor, the session, this
    /// transport's event intake and its delivery worker all run there (see the bridge's
    /// `RelayPipeline` for the thread hops this saves).
    let eventLoop: any EventLoop
    public let executor: (any TaskExecutor)?
    /// The account's nick and avatar (issue 25), published at login when they changed.
    let profile: OwnProfile
    /// The profile's XEP-0172 nick element, made once for every message sent.
    private let nickElement: XMLElement?
    /// Contacts' vCard nicknames (XEP-0054), for a roster item without a name; nil: none.
    let vCardNicks = NIOLockedValueBox<[JID: String?]>([:])
    /// Each login's number: a nick and avatar publish of an earlier login stops at its next
    /// step.
    let logins = NIOLockedValueBox(0)
    /// The side work of the run under way (``SideWork``); nil without a profile or OMEMO.
    let side = NIOLockedValueBox<SideWork?>(nil)
    /// With `omemo = true` (issue 41): how the device is set up, and the device once open.
    let omemoSettings: OMEMOSettings?
    let omemo = NIOLockedValueBox<AccountOMEMO?>(nil)
    /// Each contact's `encryption`, changed by a reload.
    let contactEncryption: NIOLockedValueBox<[String: ContactEncryption]>
    /// Where "offline" goes when many accounts share the process; nil: logged here.
    private let notices: ConnectionNotices<EventLoopClock>?
    /// Takes the session's events while some wait, without a task of its own otherwise.
    let eventDrain: Drain
    /// The stream numbers of messages handled and not yet acknowledged, between runs of the drain.
    let unacknowledged = NIOLockedValueBox<[UInt32]>([])

    /// - Parameter deliveryTimeout: a batch not written and taken within this time is
    ///   answered "retry later" and the connection is dropped (a server that stopped
    ///   reading cannot hold the queue for ever).
    public init(
        name: String,
        session: XMPPSession<EventLoopClock>,
        handler: any TransportEventHandler,
        bridgeID: String,
        deliveryTimeout: Duration = .seconds(30),
        reuploader: FileReuploader? = nil,
        profile: OwnProfile = OwnProfile(),
        omemo: OMEMOSettings? = nil,
        eventLoop: any EventLoop,
        notices: ConnectionNotices<EventLoopClock>? = nil,
        logger: Logger
    ) {
        self.notices = notices
        self.omemoSettings = omemo
        self.contactEncryption = NIOLockedValueBox(omemo?.encryption ?? [:])
        self.profile = profile
        self.nickElement = profile.nickElement
        self.reuploader = reuploader
        self.name = name
        self.eventLoop = eventLoop
        self.executor = EventLoopTaskExecutor(eventLoop)
        self.eventDrain = Drain(executor: self.executor)
        self.session = session
        self.handler = handler
        self.bridgeID = bridgeID
        self.deliveryTimeout = deliveryTimeout
        var logger = logger
        logger[metadataKey: "transport"] = "\(name)"
        self.logger = logger
    }

    public func run() async throws {
        await withTaskExecutorPreference(self.executor) {
            await self.runSession()
        }
    }

    private func runSession() async {
        let session = self.session
        guard case .ready(let side) = await self.prepare() else { return }
        let stopping = NIOLockedValueBox<Task<Void, Never>?>(nil)
        await withGracefulShutdownHandler {
            // Without side work, no task group: each frame of this task's stack is kept for
            // the account's life (docs/performance.md).
            if let side {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await side.run() }
                    await self.runAndDrain(session)
                    // The session ended: the side work's last jobs end (their requests fail
                    // at once), then what the device still holds goes to the journal.
                    side.finish()
                    await group.waitForAll()
                    await self.omemo.withLockedValue({ $0 })?.flush()
                }
            } else {
                await self.runAndDrain(session)
            }
        } onGracefulShutdown: {
            stopping.withLockedValue { $0 = Task(executorPreference: self.executor) { await session.stop() } }
        }
        // The session can end (server closed the stream) while stop() is still closing the
        // connection; returning before it finishes lets the event loops shut down under it.
        await stopping.withLockedValue { $0 }?.value
    }

    public func stop() async {
        await self.session.stop()
    }

    /// Shows `state` as this account's presence (RFC 6121 §4.2).
    ///
    /// Unavailable is told to each contact subscribed to our presence (`from`, `both`) as
    /// directed presence (RFC 6121 §4.6) while the session itself stays available: a server
    /// delivers contacts' presence and messages to the bare JID only to available resources
    /// (RFC 6121 §8.5.2.1), so a broadcast unavailable would leave the account blind to the
    /// very contacts whose presence it relays, and a 1:1 link that starts with both sides
    /// offline would never recover. The server still holds the last broadcast presence, so
    /// a contact probing afresh (after reconnecting) sees that one until the next change.
    public func publishPresence(_ state: PresenceState) async {
        do {
            switch state.availability {
            case .unavailable:
                let subscribers = await self.session.roster.items.values.filter { $0.subscription == .from || $0.subscription == .both }
                for contact in subscribers.sorted(by: { $0.jid.description < $1.jid.description }) {
                    try await self.session.send(Presence(type: .unavailable, to: contact.jid, status: state.status).element)
                }
            case .chat, .available, .away, .xa, .dnd:
                try await self.session.setPresence(show: StanzaMapping.show(state.availability), status: state.status)
            }
        } catch {
            self.logger.info("presence not published", metadata: ["error": "\(error)"])
        }
    }

    /// A contact's aggregate presence as this account sees it.
    public func contactPresence(_ jid: JID) async -> PresenceState {
        StanzaMapping.state(await self.session.presence(of: jid))
    }

    /// `contact`'s vCard (XEP-0054 §3.2), as this account may read it; nil when it has
    /// none or the request fails.
    public func vCard(of contact: JID) async -> XMLElement? {
        if case .card(let card) = await self.session.vCard(of: contact, timeout: .seconds(10)) { return card }
        return nil
    }

    /// Whether the roster has been fetched since the account connected (an empty roster
    /// before that means "unknown", not "no contacts").
    public func rosterReady() async -> Bool {
        await self.session.rosterLoaded
    }

    /// The account's roster as last fetched and pushed.
    public func rosterItems() async -> [RosterItem] {
        Array(await self.session.roster.items.values)
    }

    /// Adds or updates a roster item; optionally asks to see the contact's presence.
    /// Returns once the server's roster push has reached our copy of the roster too (the
    /// IQ result can come before the push), so the next reconciliation sees the change.
    public func setRosterItem(_ item: RosterItem, subscribe: Bool) async throws {
        try await self.session.setContact(item.jid, name: item.name, groups: item.groups)
        await self.untilRoster { roster in
            guard let current = roster.items[item.jid] else { return false }
            return current.name == item.name && Set(current.groups) == Set(item.groups)
        }
        if subscribe { try await self.session.subscribe(to: item.jid) }
    }

    /// Lets `contact` see this account's presence (RFC 6121 §3.1.5).
    public func approveSubscription(of contact: JID) async throws {
        try await self.session.approveSubscription(from: contact)
    }

    /// Removes a roster item; returns once our copy of the roster no longer has it.
    public func removeRosterItem(_ jid: JID) async throws {
        try await self.session.removeContact(jid)
        await self.untilRoster { $0.items[jid] == nil }
    }

    /// Waits (at most 2 s) until our roster copy satisfies `condition`.
    private func untilRoster(_ condition: @escaping @Sendable (Roster) -> Bool) async {
        if await !self.session.waitForRoster(timeout: .seconds(2), condition) {
            self.logger.info("roster push for our own change did not arrive within 2 s")
        }
    }

    public func deliver(_ deliveries: [Delivery]) async -> [DeliveryResult] {
        await self.deliver(deliveries, written: {})
    }

    /// Shares `text` as a file through the account's upload service (XEP-0363).
    public func shareTextFile(_ text: String, filename: String) async -> String? {
        await self.reuploader?.share(text: text, filename: filename, session: self.session)
    }

    /// Writes the batch, calls `written`, then waits for the server's acknowledgement
    /// (XEP-0198): the worker writes its next batch meanwhile.
    public func deliver(_ deliveries: [Delivery], written: @escaping @Sendable () -> Void) async -> [DeliveryResult] {
        var results = [DeliveryResult?](repeating: nil, count: deliveries.count)
        var messages: [Message] = []
        var indices: [Int] = []
        // A room that could not take one delivery takes none of the batch's later ones (it
        // may be joined meanwhile, and they must not overtake the first).
        var heldRooms: [JID: String] = [:]
        for (index, delivery) in deliveries.enumerated() {
            guard let address = delivery.target.address, let jid = try? JID(address) else {
                results[index] = .failed("not a JID: \(delivery.target.address ?? "(none)")")
                continue
            }
            var type = StanzaMapping.messageKind(delivery.type)
            var subject = delivery.subject
            if let reason = heldRooms[jid.bare] {
                results[index] = .waitForTarget(reason)
                continue
            }
            switch await self.session.checkRoomSend(to: jid, id: delivery.relayID) {
            case .notARoom:
                break
            case .removed:
                results[index] = .failed("room \(jid) is no longer a channel member")
                continue
            case .joined:
                // Into a room: a groupchat message from our nick; a subject would change the
                // room's subject, so none is sent.
                type = .groupchat
                subject = nil
            case .notJoined(let reason):
                heldRooms[jid.bare] = "not in room \(jid): \(reason)"
                results[index] = .waitForTarget("not in room \(jid): \(reason)")
                continue
            }
            // Files, corrections, replies, reactions, retractions and receipts as their
            // XEPs' elements, with the ids this target knows.
            var content = RichContent(delivery.content)
            if let url = content.url, let limit = delivery.content.reuploadMaxBytes, let reuploader = self.reuploader {
                // Before the delivery timer starts: a download is not a stuck server.
                let encrypted = await self.mayEncrypt(to: jid)
                content.url = await reuploader.reupload(url, maximumBytes: limit, encrypted: encrypted, session: self.session)
            }
            let (body, elements) = content.outgoing(text: delivery.body.isEmpty ? nil : delivery.body)
            var message = Message(type: type, to: jid, id: delivery.relayID, body: body, subject: subject)
            message.extensions.append(RelayMarker.element(bridgeID: self.bridgeID))
            // Sent again after a failure with the same id and origin-id (XEP-0359), so a
            // receiver can tell a repeat from a new message.
            message.extensions.append(OriginID.element(delivery.relayID))
            message.extensions += elements
            if type != .groupchat, let nick = self.nickElement { message.extensions.append(nick) }
            if type == .chat || type == .normal, content.mayAskReceipt(body: body), delivery.asksReceipt {
                // For phones (issue 11): ask for a receipt (XEP-0184) and a displayed marker
                // (XEP-0333), and ask the server to store it (XEP-0334) for an offline one.
                message.extensions += MessageReceipt.requests
            }
            messages.append(message)
            indices.append(index)
        }
        // With OMEMO: encrypted here, the keys committed before the write.
        await self.omemoSeal(&messages, &indices, &results)
        if !messages.isEmpty {
            let outcome = await self.handOver(messages, written: written)
            for index in indices { results[index] = outcome }
        } else {
            written()
        }
        return results.map { $0 ?? .failed("not attempted") }
    }

    /// Writes `messages` and waits until the server has taken them (acknowledged, XEP-0198,
    /// or a ping's round trip). A batch not taken within the delivery timeout makes the
    /// session drop its connection if it was online all that time (one being taken over,
    /// which the batch waits for, is left to finish); the answer then comes from the
    /// session: taken once the stream is resumed (XEP-0198 §5), or "retry later" when the
    /// connection's requests fail.
    private func handOver(_ messages: [Message], written: @escaping @Sendable () -> Void) async -> DeliveryResult {
        let session = self.session
        let logger = self.logger
        let executor = self.executor
        let timeout = self.deliveryTimeout
        // One timer on the loop, removed (no wakeup) when the answer comes first.
        let deadline = self.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            Task(executorPreference: executor) {
                if await session.dropStalledConnection(notTakenFor: timeout) {
                    logger.warning("delivery not taken in time; dropping the connection", metadata: ["timeout": "\(timeout)"])
                } else {
                    logger.info("delivery not taken in time, but the connection is not online for as long; it waits", metadata: ["timeout": "\(timeout)"])
                }
            }
        }
        defer { deadline.cancel() }
        do {
            // Taken at the server's stream management acknowledgement, or at a ping's
            // round trip where it has none (a stream is handled in order).
            try await session.sendAcknowledged(messages, written: written)
            return .delivered
        } catch {
            return .retryLater("\(error)")
        }
    }

    /// Hands `event` to the bridge (an encrypted message `opened` already, if given).
    /// Not inlined into the session's event loop: its locals then live in its own frame,
    /// popped after each event, not in the long-lived loop's (one per account).
    @inline(never)
    func forward(_ event: XMPPSessionEvent, opened: OMEMOArrival? = nil) async {
        switch event {
        case .online(let jid):
            self.logger.info("online", metadata: ["jid": "\(jid)"])
            if !self.profile.isEmpty, let side = self.side.withLockedValue({ $0 }) {
                // Off the event path: a few round trips, and nothing waits for them.
                let login = self.logins.withLockedValue { count in
                    count += 1
                    return count
                }
                side.add { await self.publishProfile(login: login) }
            }
            self.announceOMEMO()
            await self.handler.handle(.available, from: self.name)
            // The roster was fetched while restoring the session.
            await self.handler.handle(.rosterChanged, from: self.name)
        case .offline(let error):
            if let error, let notices = self.notices {
                notices.notice(.offline, account: self.session.account, reason: "\(error)", metadata: ["error": "\(error)"], logger: self.logger)
            } else if let error {
                self.logger.warning("offline", metadata: ["error": "\(error)"])
            } else {
                self.logger.info("offline")
            }
            await self.handler.handle(.unavailable(reason: error.map { "\($0)" }), from: self.name)
        case .message(let message, let carbon):
            if carbon == nil, message.type == .error, let id = message.id, let error = message.error {
                // A bounce: the server (or the recipient's) refused a message we sent.
                await self.handler.handle(.bounced(relayID: id, reason: error.description, permanent: !error.isTransient), from: self.name)
                return
            }
            if carbon == nil, let receipt = Self.receipt(in: message, account: self.name) {
                // Recorded through the journal, so acknowledged (stream management) with the burst.
                await self.handler.handle(.receipt(receipt), from: self.name)
                return
            }
            guard carbon == nil else { return }
            let (arrival, followUp): (OMEMOArrival, AccountOMEMO.FollowUp?)
            if let opened { (arrival, followUp) = (opened, nil) } else { (arrival, followUp) = await self.omemoArrival(message) }
            let arrived: Message
            switch arrival {
            case .relay(let message, _), .decrypted(let message): arrived = message
            case .done:
                await self.omemoFollowUp(followUp)
                return
            }
            guard var inbound = await self.inbound(arrived) else { return await self.omemoFollowUp(followUp) }
            Self.mark(&inbound, after: arrival)
            await self.handler.handle(.message(inbound), from: self.name)
            // The device's keys that moved past this message: after its entries.
            await self.omemoFollowUp(followUp)
        case .stopped(let error):
            if let error {
                self.logger.error("account stopped", metadata: ["error": "\(error)"])
                await self.handler.handle(.stopped(reason: "\(error)"), from: self.name)
            } else {
                await self.handler.handle(.unavailable(reason: "stopped"), from: self.name)
            }
        case .presence(let presence, let best):
            guard let from = presence.from else { return }
            let own = await self.session.boundJID
            if let own, from.bare == own.bare {
                // The user's other clients; our own resource does not count.
                let others = await self.session.resources(of: own).filter { $0.from != own }
                await self.handler.handle(.ownPresence(StanzaMapping.state(others.first).withoutAvatar), from: self.name)
                return
            }
            let rosterName = await self.session.roster.items[from.bare]?.name
            let nick = rosterName ?? from.localpart ?? from.domainpart
            await self.handler.handle(
                .presence(contact: Endpoint(transport: self.name, address: from.bare.description), nick: nick, state: StanzaMapping.state(best)),
                from: self.name
            )
        case .rosterChanged, .rosterFetched:
            await self.handler.handle(.rosterChanged, from: self.name)
        case .subscriptionRequest(let from, _):
            // Left open by the account's subscription policy: someone else may decide (a
            // gateway user, from the contact's puppet).
            guard let own = await self.session.boundJID else { return }
            await self.handler.handle(
                .subscriptionRequest(from: Endpoint(transport: self.name, address: from.bare.description), addressee: own.bare.description), from: self.name
            )
        case .subscriptionChanged:
            return
        case .archiveCursorMoved(let cursor):
            await self.handler.handle(.resumePointMoved(ResumePoint(cursor.description)), from: self.name)
        case .roomChanged(let status):
            if status.state == .joined {
                await self.handler.handle(.targetReady(Endpoint(transport: self.name, address: status.jid)), from: self.name)
            }
        case .occupant(let room, let nick, let joined):
            await self.handler.handle(.occupant(room: Endpoint(transport: self.name, address: room.description), nick: nick, joined: joined), from: self.name)
        case .copyStanzaID(let room, let id, let stanzaID):
            await self.handler.handle(.copyStanzaID(relayID: id, target: Endpoint(transport: self.name, address: room.description), stanzaID: stanzaID), from: self.name)
        case .roomCursorMoved(let room, let cursor):
            await self.handler.handle(.resumePointMoved(ResumePoint(cursor.description, key: self.resumeKey(room: room))), from: self.name)
        case .resumedAfterRestart(let handledIDs):
            self.logger.info("resumed the session of before the restart", metadata: ["delivered meanwhile": "\(handledIDs.count)"])
            await self.handler.handle(.acknowledgedBeforeRestart(relayIDs: handledIDs), from: self.name)
        }
    }

    /// The receipt or displayed marker in `message` for one of our ids (see
    /// ``MessageReceipt/of(_:)``), from its sender's bare JID on `account`.
    static func receipt(in message: Message, account: String) -> DeliveryReceipt? {
        guard let from = message.from, let receipt = MessageReceipt.of(message) else { return nil }
        return DeliveryReceipt(
            relayID: receipt.id, from: Endpoint(transport: account, address: from.bare.description), displayed: receipt.displayed
        )
    }

    /// The key a room's archive cursor is stored under (``ResumePoint/key``).
    public func resumeKey(room: JID) -> String {
        "\(self.name) room:\(room.bare)"
    }

    /// The rooms to sit in (XEP-0045); joined or left at once when online.
    public func setRooms(_ rooms: [RoomConfiguration], cursors: [JID: ArchiveCursor] = [:]) async {
        await self.session.setRooms(rooms, cursors: cursors)
    }

    /// Each room's state, for `status` and `rooms`.
    public func roomStatuses() async -> [RoomStatus] {
        await self.session.roomStatuses
    }

    /// The router's view of a message; nil for errors and messages without a sender.
    ///
    /// A room occupant's message (the session lets only those of our rooms through) comes
    /// from the room, by the occupant's nick; its id is the one its sender gave it
    /// (origin-id), so the bridge's own relays are recognised by id, and it is unique by the
    /// room's stanza-id, with the room's own archive cursor.
    private func inbound(_ message: Message) async -> InboundMessage? {
        guard let from = message.from else { return nil }
        let nick: String
        let given: String?
        var room: JID?
        switch message.type {
        case .chat, .normal, .headline:
            nick = await self.contactNick(from, in: message)
            given = message.id
        case .groupchat:
            guard let occupant = from.resourcepart else { return nil }
            nick = occupant
            given = OriginID.of(message) ?? message.id
            room = from.bare
        case .error:
            return nil
        }
        let id: String
        if let given {
            id = given
        } else {
            id = await self.session.nextID()
        }
        let (rich, text) = RichContent.parse(message)
        let content = MessageContent(rich)
        var inbound = InboundMessage(
            source: Endpoint(transport: self.name, address: from.bare.description),
            sender: from.description,
            nick: nick,
            id: id,
            body: text,
            subject: message.subject,
            relayedBy: RelayMarker.relayedBy(message),
            // The server hears of it (stream management) only after the commit, at the end
            // of the burst: read on while it is committed.
            awaitsCommit: false,
            sourceSequence: message.streamNumber,
            deduplicationKey: room.map { room in message.stanzaID.map { "\(room) \($0)" } } ?? message.stanzaID?.rawValue,
            resumePoint: message.archiveCursor.map { ResumePoint($0.description, key: room.map(self.resumeKey(room:))) }
        )
        inbound.content = content
        inbound.sourceType = StanzaMapping.deliveryType(message.type)
        if room != nil { inbound.stanzaID = message.stanzaID }
        return inbound
    }
}
