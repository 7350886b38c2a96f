import BridgeRouting
import BridgeState
import Foundation
import TransportCore

/// Paging (issue 24): the pipeline's side of ``PagingStateMachine``. Alerts of paging
/// channels are recorded in the commit that queues them; recipients' acks and commands
/// are read before routing; repeats and escalations are sent when the ``PagingService``'s
/// timer says; a monitoring notification accepted lately is not relayed again.
extension RelayPipeline {
    /// Reads pages, accepted notifications and postponed deliveries of the last days back,
    /// and connects the service: once, at start.
    package func loadPaging(
        from store: any StateStore, policies: [String: PagingPolicy], silences: (any SilenceRequesting)?, service: PagingService<C>?, now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StateStoreError) {
        self.paging.silences = silences
        self.paging.now = now
        self.paging.wake = service?.wake
        if let submit = service?.submit { self.paging.submit = { job in submit.yield(job) } }
        self.paging.machine.update(policies: policies)
        let current = now()
        for page in try store.pages(since: current.addingTimeInterval(-PagingStateMachine.memory)) { self.paging.machine.restore(page) }
        for accepted in try store.acceptedNotifications(since: current.addingTimeInterval(-NotificationDedupe.longestWindow)) {
            self.paging.accepted.remember(accepted.key, id: accepted.id, at: accepted.at, committed: true)
        }
        for postponement in try store.postponedDeliveries() { self.paging.postponed.add(postponement) }
        self.paging.nextPrune = current
        self.paging.wake?.wake()
    }

    /// Applies reloaded channel settings.
    package func updatePaging(policies: [String: PagingPolicy]) {
        self.paging.machine.update(policies: policies)
        self.paging.wake?.wake()
    }

    /// The page of message `id` from `source`, for `GET /messages/{id}`.
    package func page(source: String, id: String) -> Page? {
        self.paging.machine.page(source: source, id: id)
    }

    // MARK: Relay path

    /// For a monitoring notification: whether the same one was accepted lately, and if it
    /// is new, its key, remembered as pending until the message's commit.
    package func acceptance(of message: InboundMessage) -> (lookup: NotificationDedupe.Lookup, key: String?) {
        guard let notification = message.notification, let channel = message.channel else { return (.new, nil) }
        let window = self.paging.machine.policies[channel]?.dedupeWindow ?? PagingPolicy().dedupeWindow
        let key = NotificationDedupe.key(channel: channel, notification)
        let now = self.paging.now()
        let lookup = self.paging.accepted.lookup(key, window: window, at: now)
        guard case .new = lookup else { return (lookup, nil) }
        self.paging.accepted.remember(key, id: message.id, at: now)
        return (.new, key)
    }

    /// The journal entry that stores an accepted notification with its message.
    package func acceptedEntry(_ key: String, id: String) -> JournalEntry {
        .notificationAccepted(key: key, id: id, at: self.paging.now())
    }

    /// Reads a contact's message as an ack or command for a page it got; true when it was
    /// one (it is not routed then).
    package func readForPaging(_ message: InboundMessage) -> Bool {
        guard message.source.address != nil else { return false }
        let from = Router.normalized(message.source)
        // Most messages come from someone no alert went to: nothing more to look up.
        guard self.paging.machine.wasPaged(from) else { return false }
        let reading = self.paging.machine.received(
            message, from: from, at: self.paging.now(), converses: !self.routing.router.sendingChannels(of: from).isEmpty, makeID: { self.routing.ids.next() }
        )
        guard case .handled(let actions) = reading else { return false }
        self.logger.info("paging: a recipient's message read as an ack or command", metadata: ["from": "\(from)", "id": "\(message.id)"])
        self.runPaging(actions)
        return true
    }

    /// Takes a committed proposal into memory and wakes the timer.
    package func takeIn(_ proposal: PagingProposal) {
        for page in proposal.pages {
            self.paging.machine.restore(page)
            self.outlets.metrics.paged(channel: page.channel)
        }
        for postponement in proposal.postponements { self.paging.postponed.add(postponement) }
        if let key = proposal.notificationKey { self.paging.accepted.committed(key) }
        if !proposal.pages.isEmpty || !proposal.postponements.isEmpty { self.paging.wake?.wake() }
    }

    /// A displayed marker: an ack where the channel counts it.
    package func displayedForPaging(relayID: String, from: Endpoint) {
        self.runPaging(self.paging.machine.displayed(relayID: relayID, from: Router.normalized(from), at: self.paging.now(), makeID: { self.routing.ids.next() }))
    }

    // MARK: Actions and timer

    /// Carries out the machine's actions: pages stored and notices queued in one group
    /// commit, local subscribers told, Alertmanager asked (by the service, off the actor).
    package func runPaging(_ actions: [PagingStateMachine.Action]) {
        var entries: [JournalEntry] = []
        var notices: [PagingStateMachine.Notice] = []
        for action in actions {
            switch action {
            case .store(let page):
                entries.append(.page(page))
            case .send(let more):
                notices += more
                for notice in more { self.outlets.metrics.pagingNotices(channel: notice.channel) }
            case .announce(let ack, let key, let channel):
                self.logger.notice("alert acked", metadata: ["id": "\(key)", "by": "\(ack.by)", "how": "\(ack.how)"])
                self.outlets.metrics.acknowledged(channel: channel, how: ack.how)
                self.notify(.alertAcked(ack, channel: channel, source: Endpoint(transport: key.source), id: key.id), from: key.source)
            case .silence(let url, let matchers, let duration, let createdBy, let key, let to, let replyTo):
                let channel = self.paging.machine.page(source: key.source, id: key.id)?.channel ?? ""
                self.askAlertmanager(channel: channel, to: to, replyTo: replyTo) { silences, now in
                    let ends = now.addingTimeInterval(duration.seconds)
                    let id = try await silences.createSilence(
                        url: url, matchers: matchers, startsAt: now, endsAt: ends, createdBy: createdBy, comment: "from XMPP by \(createdBy) through xmpp-bridge"
                    )
                    await self.silenced(key, id: id)
                    return "silenced until \(AlertAck.timestamp(ends)) (id \(id)); unsilence \(id) ends it"
                }
            case .unsilence(let url, let id, let channel, let to, let replyTo):
                self.askAlertmanager(channel: channel, to: to, replyTo: replyTo) { silences, _ in
                    try await silences.expireSilence(url: url, id: id)
                    return "silence \(id) expired"
                }
            }
        }
        self.queue(notices, with: entries)
        // The next due time may have moved (the timer recomputes it after its own tick).
        if !actions.isEmpty { self.paging.wake?.wake() }
    }

    /// Queues bridge-made notices (with `extra` entries in the same commit).
    package func queue(_ notices: [PagingStateMachine.Notice], with extra: [JournalEntry]) {
        guard !notices.isEmpty || !extra.isEmpty else { return }
        let deliveries = notices.map { notice in
            Delivery(
                channel: notice.channel, target: notice.target, body: notice.text, originalBody: notice.text, nick: "xmpp-bridge", type: .chat,
                source: Endpoint(transport: "paging"), sourceID: notice.relayID, relayID: notice.relayID, content: MessageContent(replyTo: notice.replyTo)
            )
        }
        let now = Date()
        guard let entries = self.sequenced(deliveries, at: now) else { return }
        self.appendUncommitted(entries, with: extra + self.archiving.entries(bridgeMade: deliveries, at: now, router: self.routing.router))
    }

    private func silenced(_ key: PageKey, id: String) {
        self.runPaging(self.paging.machine.silenced(key, id: id))
    }

    /// Has the service run an Alertmanager request and answers `to` with its outcome.
    private func askAlertmanager(
        channel: String, to: Endpoint, replyTo: String?, _ request: @escaping @Sendable (any SilenceRequesting, Date) async throws -> String
    ) {
        guard let silences = self.paging.silences, let submit = self.paging.submit else { return }
        let now = self.paging.now()
        let logger = self.logger
        submit {
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
        self.queue([PagingStateMachine.Notice(channel: channel, target: to, text: text, relayID: self.routing.ids.next(), replyTo: replyTo)], with: [])
    }

    /// When something is next due (a repeat, an escalation, a release, the hourly prune) on the
    /// timer's clock; nil when nothing is. Rounded up to the millisecond, so the timer
    /// never wakes early.
    package func pagingDeadline() -> C.Instant? {
        guard let due = [self.paging.machine.nextDue, self.paging.postponed.nextRelease, self.paging.nextPrune].compactMap({ $0 }).min() else { return nil }
        return self.clock.now.advanced(by: .milliseconds(Int64((max(0, due.timeIntervalSince(self.paging.now())) * 1000).rounded(.up))))
    }

    /// How often pages and accepted notifications past their time are forgotten.
    package static var pruneInterval: TimeInterval { 3600 }

    /// Sends what is due, releases what may go, forgets pages past their time (hourly).
    package func pagingTick() {
        let now = self.paging.now()
        self.releasePostponed(at: now)
        let actions = self.paging.machine.due(at: now, makeID: { self.routing.ids.next() })
        if let prune = self.paging.nextPrune, prune <= now {
            self.paging.nextPrune = now.addingTimeInterval(Self.pruneInterval)
            self.paging.machine.forget(before: now)
            self.paging.accepted.forget(before: now)
            self.journal.record([
                .prunePaging(
                    pagesBefore: now.addingTimeInterval(-PagingStateMachine.memory), notificationsBefore: now.addingTimeInterval(-NotificationDedupe.longestWindow)
                )
            ])
        }
        self.runPaging(actions)
    }
}
