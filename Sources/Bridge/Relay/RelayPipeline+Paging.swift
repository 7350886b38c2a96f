import Foundation
import TransportCore
import Transports

/// Paging (issue 24): the pipeline's side of ``PagingStateMachine``. Alerts of paging
/// channels are recorded in the commit that queues them; recipients' acks and
/// commands are read before routing; repeats and escalations are sent when due; a
/// monitoring notification accepted lately is not relayed again.
extension RelayPipeline {
    /// Sets the silence client and the wall clock, and reads pages and accepted
    /// notifications of the last days back: once, at start.
    func loadPaging(policies: [String: PagingPolicy], silences: (any SilenceRequesting)?, now: @escaping @Sendable () -> Date = { Date() }) throws(StateStoreError) {
        self.paging.silences = silences
        self.paging.now = now
        self.paging.machine.update(policies: policies)
        let current = now()
        for page in try self.store.pages(since: current.addingTimeInterval(-PagingStateMachine.memory)) { self.paging.machine.restore(page) }
        for accepted in try self.store.acceptedNotifications(since: current.addingTimeInterval(-NotificationDedupe.longestWindow)) {
            self.paging.accepted.remember(accepted.key, id: accepted.id, at: accepted.at)
        }
        for postponement in try self.store.postponedDeliveries() { self.paging.postponed.add(postponement) }
        self.reschedulePaging()
    }

    /// Applies reloaded channel settings.
    func updatePaging(policies: [String: PagingPolicy]) {
        self.paging.machine.update(policies: policies)
        self.reschedulePaging()
    }

    /// The page of message `id` from `source`, for `GET /messages/{id}`.
    func page(source: String, id: String) -> Page? {
        self.paging.machine.page(source: source, id: id)
    }

    // MARK: Relay path

    /// For a monitoring notification: the id it was accepted under lately (then it is not
    /// relayed again), else the entry that remembers it with the message's commit.
    func acceptance(of message: InboundMessage) -> (duplicateOf: String?, entries: [JournalEntry]) {
        guard let notification = message.notification, let channel = message.channel else { return (nil, []) }
        // Its key is forgotten again if the message's commit fails (``notAccepted(_:)``).
        let window = self.paging.machine.policies[channel]?.dedupeWindow ?? PagingPolicy().dedupeWindow
        let key = NotificationDedupe.key(channel: channel, notification)
        let now = self.paging.now()
        if let first = self.paging.accepted.duplicate(of: key, window: window, at: now) { return (first, []) }
        self.paging.accepted.remember(key, id: message.id, at: now)
        return (nil, [.notificationAccepted(key: key, id: message.id, at: now)])
    }

    /// The commit of `message` failed: a retry of its notification is new, not a duplicate.
    func notAccepted(_ message: InboundMessage) {
        guard let notification = message.notification, let channel = message.channel else { return }
        self.paging.accepted.forget(NotificationDedupe.key(channel: channel, notification))
    }

    /// Reads a contact's message as an ack or command for a page it got;
    /// true when it was one (it is not routed then).
    func readForPaging(_ message: InboundMessage) -> Bool {
        guard message.source.address != nil else { return false }
        let from = Router.normalized(message.source)
        let router = self.router
        let reading = self.paging.machine.received(
            message, from: from, at: self.paging.now(),
            relays: { channel in router.sendingChannels(of: from).contains { router.channels[$0].name == channel } },
            makeID: { self.ids.next() }
        )
        guard case .handled(let actions) = reading else { return false }
        self.logger.info("paging: a recipient's message read as an ack or command", metadata: ["from": "\(from)", "id": "\(message.id)"])
        self.runPaging(actions)
        return true
    }

    /// A RESOLVED notification goes as a reply to the copy of its FIRING message each
    /// recipient got (XEP-0461), and ends that alert's escalation.
    func threadResolution(of message: InboundMessage, _ deliveries: inout [Delivery]) -> [JournalEntry] {
        guard let notification = message.notification, notification.isResolved, let channel = message.channel,
            self.paging.machine.policy(channel) != nil,
            let (page, replies) = self.paging.machine.resolved(thread: notification.threadKey, at: self.paging.now())
        else { return [] }
        for index in deliveries.indices {
            if let copy = replies[Router.normalized(deliveries[index].target)] { deliveries[index].content.replyTo = copy }
        }
        self.reschedulePaging()
        return [.page(page)]
    }

    /// Records a new page for an alert a local input sent into a paging channel; its
    /// entries go into the commit that queues the deliveries.
    func recordPage(for message: InboundMessage, _ deliveries: [Delivery]) -> [JournalEntry] {
        guard message.source.address == nil, message.notification?.isResolved != true else { return [] }
        var entries: [JournalEntry] = []
        for (channel, group) in Dictionary(grouping: deliveries, by: \.channel) where self.paging.machine.policy(channel) != nil {
            // Recipients are people: account contacts, not rooms or local outputs.
            let copies = group.filter { $0.target.address != nil && !self.router.isRoom(Router.normalized($0.target)) }
                .map { (relayID: $0.relayID, target: Router.normalized($0.target)) }
            guard let first = group.first(where: { $0.target.address != nil }) else { continue }
            for action in self.paging.machine.paged(message: message, channel: channel, text: first.body, copies: copies, at: self.paging.now()) {
                if case .store(let page) = action { entries.append(.page(page)) }
            }
        }
        if !entries.isEmpty { self.reschedulePaging() }
        return entries
    }

    /// A displayed marker: an ack where the channel counts it.
    func displayedForPaging(relayID: String, from: Endpoint) {
        self.runPaging(self.paging.machine.displayed(relayID: relayID, from: Router.normalized(from), at: self.paging.now(), makeID: { self.ids.next() }))
    }

    // MARK: Actions and timer

    /// Carries out the machine's actions: pages stored and notices queued in one group
    /// commit, local subscribers told, Alertmanager asked (off the actor).
    func runPaging(_ actions: [PagingStateMachine.Action]) {
        var entries: [JournalEntry] = []
        var notices: [PagingStateMachine.Notice] = []
        for action in actions {
            switch action {
            case .store(let page):
                entries.append(.page(page))
            case .send(let more):
                notices += more
            case .announce(let ack, let key, let channel):
                self.logger.notice("alert acked", metadata: ["id": "\(key)", "by": "\(ack.by)", "how": "\(ack.how)"])
                self.notify(.alertAcked(ack, channel: channel, source: Endpoint(transport: key.source), id: key.id), from: key.source)
            case .silence(let url, let matchers, let duration, let createdBy, let channel, let to, let replyTo):
                self.askAlertmanager(channel: channel, to: to, replyTo: replyTo) { silences, now in
                    let id = try await silences.createSilence(
                        url: url, matchers: matchers, startsAt: now, endsAt: now.addingTimeInterval(duration.seconds), createdBy: createdBy,
                        comment: "from XMPP by \(createdBy) through xmpp-bridge"
                    )
                    return "silenced until \(AlertAck.timestamp(now.addingTimeInterval(duration.seconds))) (id \(id)); unsilence \(id) ends it"
                }
            case .unsilence(let url, let id, let channel, let to, let replyTo):
                self.askAlertmanager(channel: channel, to: to, replyTo: replyTo) { silences, _ in
                    try await silences.expireSilence(url: url, id: id)
                    return "silence \(id) expired"
                }
            }
        }
        self.queue(notices, with: entries)
        self.reschedulePaging()
    }

    /// Queues bridge-made notices (with `extra` entries in the same commit).
    func queue(_ notices: [PagingStateMachine.Notice], with extra: [JournalEntry]) {
        guard !notices.isEmpty || !extra.isEmpty else { return }
        let deliveries = notices.map { notice in
            Delivery(
                channel: notice.channel, target: notice.target, body: notice.text, originalBody: notice.text, nick: "xmpp-bridge", type: .chat,
                source: Endpoint(transport: "paging"), sourceID: notice.relayID, relayID: notice.relayID, content: MessageContent(replyTo: notice.replyTo)
            )
        }
        guard let entries = self.sequenced(deliveries, at: Date()) else { return }
        self.appendUncommitted(entries, with: extra)
    }

    /// Runs an Alertmanager request off the actor and answers `to` with its outcome.
    private func askAlertmanager(
        channel: String, to: Endpoint, replyTo: String?, _ request: @escaping @Sendable (any SilenceRequesting, Date) async throws -> String
    ) {
        guard let silences = self.paging.silences else { return }
        let now = self.paging.now()
        let logger = self.logger
        Task {
            let text: String
            do {
                text = try await request(silences, now)
                logger.notice("paging: Alertmanager request done from the chat", metadata: ["by": "\(to)", "answer": "\(text)"])
            } catch {
                logger.warning("paging: Alertmanager request failed", metadata: ["by": "\(to)", "error": "\(error)"])
                text = "Alertmanager said no: \(error)"
            }
            await self.answer(text, channel: channel, to: to, replyTo: replyTo)
        }
    }

    private func answer(_ text: String, channel: String, to: Endpoint, replyTo: String?) {
        self.queue([PagingStateMachine.Notice(channel: channel, target: to, text: text, relayID: self.ids.next(), replyTo: replyTo)], with: [])
    }

    /// Sends what is due and arms the timer for the next.
    func pagingTick() {
        self.paging.timerDue = nil
        let now = self.paging.now()
        self.releasePostponed(at: now)
        self.runPaging(self.paging.machine.due(at: now, makeID: { self.ids.next() }))
    }

    /// Arms the timer for the machine's next due time (one timer; re-armed when it moves).
    func reschedulePaging() {
        let due = [self.paging.machine.nextDue, self.paging.postponed.nextRelease].compactMap { $0 }.min()
        guard due != self.paging.timerDue else { return }
        self.paging.timer?.cancel()
        self.paging.timerDue = due
        guard let due else {
            self.paging.timer = nil
            return
        }
        let delay = max(0, due.timeIntervalSince(self.paging.now()))
        let clock = self.clock
        let deadline = clock.now.advanced(by: .milliseconds(Int64(delay * 1000)))
        self.paging.timer = Task {
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return
            }
            await self.pagingTick()
        }
    }
}
