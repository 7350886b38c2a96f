import BridgeState
import Foundation
import TransportCore

/// The paging logic of issue 24, without I/O: tracks the alerts of paging channels, reads
/// recipients' replies, reactions, markers and words as acks and commands,
/// and says when to repeat or escalate. The ``RelayPipeline`` runs its actions (stores
/// pages, sends notices, asks Alertmanager) and feeds it the time.
///
/// Time is a `Date` given to each event: pages outlive the process, so their due times
/// are wall-clock times; the timer that calls ``due(at:)`` takes a `Clock`.
package struct PagingStateMachine: Sendable {
    /// A text the bridge sends one recipient, threaded under `replyTo` (XEP-0461) when set.
    package struct Notice: Hashable, Sendable {
        package var channel: String
        package var target: Endpoint
        package var text: String
        package var relayID: String
        package var replyTo: String?

        package init(channel: String, target: Endpoint, text: String, relayID: String, replyTo: String? = nil) {
            self.channel = channel
            self.target = target
            self.text = text
            self.relayID = relayID
            self.replyTo = replyTo
        }
    }

    /// What the pipeline is to do for the machine.
    package enum Action: Hashable, Sendable {
        /// Persist the page as it is now.
        case store(Page)
        case send([Notice])
        /// Tell the channel's local subscribers.
        case announce(AlertAck, page: PageKey, channel: String)
        /// Ask Alertmanager for a silence of `duration` matching the group's common labels;
        /// answer `to` under `replyTo` with the outcome.
        case silence(url: String, matchers: [String: String], duration: Duration, createdBy: String, page: PageKey, to: Endpoint, replyTo: String?)
        case unsilence(url: String, id: String, channel: String, to: Endpoint, replyTo: String?)
    }

    /// What became of a message from a recipient.
    package enum Reading: Hashable, Sendable {
        /// Nothing to do with paging: route it as usual.
        case route
        /// Taken as an ack or a command; not relayed.
        case handled([Action])
    }

    /// How an alert acked by a command ("ack", "silence 2h") was acked; the other ways are
    /// the ``PagingPolicy/AckKind`` names.
    package static let commandAck = "command"

    package private(set) var pages: [PageKey: Page] = [:]
    /// Relay id of any copy → its page.
    private var byCopy: [String: PageKey] = [:]
    /// Recipient → its pages, newest last.
    private var byRecipient: [Endpoint: [PageKey]] = [:]
    /// Alert group thread → its latest FIRING page.
    private var byThread: [String: PageKey] = [:]
    package private(set) var policies: [String: PagingPolicy]

    /// How long a page is kept in memory once created: acks and commands refer
    /// to pages younger than this.
    package static let memory: TimeInterval = 7 * 86_400

    /// - Parameter policies: every channel's, by name (a channel that does not page has
    ///   one too, for its de-duplication window and severities).
    package init(policies: [String: PagingPolicy] = [:]) {
        self.policies = policies
    }

    package mutating func update(policies: [String: PagingPolicy]) {
        self.policies = policies
    }

    package func policy(_ channel: String) -> PagingPolicy? {
        self.policies[channel].flatMap { $0.isPaging ? $0 : nil }
    }

    // MARK: Events

    /// A page as it now is: loaded from the state database at start, or proposed by
    /// ``page(for:channel:text:copies:postponed:at:)`` or ``resolution(of:channel:)`` and
    /// committed with its message.
    package mutating func restore(_ page: Page) {
        self.index(page)
    }

    /// The page for an alert of a paging channel, not yet taken in: `copies` are its
    /// deliveries' relay ids and targets, `postponed` the targets whose copy waits (quiet
    /// hours, a flood): they are not repeated to. The caller commits it with the message,
    /// then ``restore(_:)``s it.
    package func page(
        for message: InboundMessage, channel: String, text: String, copies: [(relayID: String, target: Endpoint)], postponed: Set<Endpoint>, at now: Date
    ) -> Page? {
        guard let policy = self.policy(channel), !copies.isEmpty else { return nil }
        var page = Page(
            source: message.source, id: message.id, channel: channel, priority: policy.priority(of: message), text: text, createdAt: now,
            recipients: [], copies: [:], tierSince: now, lastSent: now
        )
        for copy in copies { page.add(copy: copy.relayID, to: copy.target) }
        page.current = page.recipients.filter { !postponed.contains($0) }
        if let notification = message.notification, !notification.isResolved {
            page.thread = notification.threadKey
            page.commonLabels = notification.commonLabels
        }
        return page
    }

    /// A RESOLVED notification of a group in `channel`: its FIRING page closed (no more
    /// escalation), not yet taken in, and the copy each recipient got, which the
    /// resolution replies to.
    package func resolution(of thread: String, channel: String) -> (page: Page, replyTo: [Endpoint: String])? {
        guard let key = self.byThread[Self.threadKey(thread, channel: channel)], var page = self.pages[key] else { return nil }
        page.resolved = true
        var replies: [Endpoint: String] = [:]
        for recipient in page.recipients {
            if let copy = page.firstCopy(to: recipient) { replies[recipient] = copy }
        }
        return (page, replies)
    }

    /// Alertmanager made silence `id` for `page`: only such silences may be ended from the chat.
    package mutating func silenced(_ key: PageKey, id: String) -> [Action] {
        guard var page = self.pages[key] else { return [] }
        page.silences.append(id)
        self.index(page)
        return [.store(page)]
    }

    private static func threadKey(_ thread: String, channel: String) -> String { "\(channel)\u{1E}\(thread)" }

    /// Whether `from` was paged lately (only then can its message be about a page).
    package func wasPaged(_ from: Endpoint) -> Bool {
        self.byRecipient[from]?.isEmpty == false
    }

    /// A message from `from` (an XMPP contact, bare JID) that may be about a page.
    /// - Parameter converses: whether `from` sends into some channel: its words that are
    ///   no command, and its files, corrections and other messages, are conversation then,
    ///   routed as usual.
    package mutating func received(_ message: InboundMessage, from: Endpoint, at now: Date, converses: Bool, makeID: () -> String) -> Reading {
        guard let recent = self.byRecipient[from], !recent.isEmpty else { return .route }
        let content = message.content
        // A reply or reaction to one of the copies names its page, when that copy went to
        // the sender (another paged member who learnt its id speaks for nobody there).
        if let referenced = content.replyTo ?? content.reactionTo, let key = self.byCopy[referenced], let page = self.pages[key], page.copies[referenced] == from {
            guard let policy = self.policy(page.channel) else { return .route }
            if content.reactionTo != nil {
                guard policy.ackKinds.contains(.reaction), !(content.reactions ?? []).isEmpty else { return .handled([]) }
                return .handled(self.ack(key, by: from, how: "reaction", at: now, replyTo: referenced, makeID: makeID))
            }
            let command = PagingCommand(message.body ?? "")
            switch command {
            case .silence, .unsilence:
                return .handled(self.command(command, page: key, from: from, replyTo: referenced, at: now, makeID: makeID))
            case .ack, .unknown:
                guard policy.ackKinds.contains(.reply) else { return .handled([]) }
                return .handled(self.ack(key, by: from, how: "reply", at: now, replyTo: referenced, makeID: makeID))
            }
        }
        // Otherwise the newest page that went to `from` is the conversation's.
        guard let key = recent.last, let page = self.pages[key], let policy = self.policy(page.channel) else { return .route }
        guard let body = message.body, content.isEmpty else { return .route }
        let command = PagingCommand(body)
        // Words that are no command: conversation for someone who talks in a channel; else
        // the help line while an alert to them is open (after it, dropped as from a stranger).
        if case .unknown = command, converses || !recent.contains(where: { self.pages[$0]?.isOpen == true }) { return .route }
        if case .ack = command, !policy.ackKinds.contains(.reply) {
            return .handled([.send([self.notice(page, to: from, text: "Acknowledging by reply is off in this channel.", makeID: makeID)])])
        }
        return .handled(self.command(command, page: key, from: from, replyTo: nil, at: now, makeID: makeID))
    }

    /// A displayed marker (XEP-0333) for copy `relayID` from `from`.
    package mutating func displayed(relayID: String, from: Endpoint, at now: Date, makeID: () -> String) -> [Action] {
        // After the ack, markers (of the alert, of the ack notice) say nothing more.
        guard let key = self.byCopy[relayID], let page = self.pages[key], page.copies[relayID] == from, page.ack == nil,
            let policy = self.policy(page.channel), policy.ackKinds.contains(.displayed)
        else { return [] }
        return self.ack(key, by: from, how: "displayed", at: now, replyTo: relayID, makeID: makeID)
    }

    /// Repeats and escalations due at `now`.
    package mutating func due(at now: Date, makeID: () -> String) -> [Action] {
        var actions: [Action] = []
        for key in self.pages.keys.sorted(by: { $0.description < $1.description }) {
            guard var page = self.pages[key], let policy = self.policy(page.channel), let due = page.nextDue(under: policy), due <= now else { continue }
            var notices: [Notice] = []
            if page.tier < policy.tiers.count, page.tierSince.addingTimeInterval(policy.tiers[page.tier].after.seconds) <= now {
                let waited = now.timeIntervalSince(page.tierSince)
                let previous = page.recipients.map { $0.address ?? $0.transport }.joined(separator: ", ")
                let tier = policy.tiers[page.tier]
                let text = "escalated: not acknowledged by \(previous) for \(Self.minutes(waited))\n\(page.text)"
                for target in tier.to {
                    let notice = Notice(channel: page.channel, target: target, text: text, relayID: makeID())
                    page.add(copy: notice.relayID, to: target)
                    notices.append(notice)
                }
                page.escalations.append(MessageDeliveryStatus.Escalation(to: tier.to.map(\.description), at: now))
                page.tier += 1
                page.tierSince = now
                page.current = tier.to
            } else {
                let text = "repeated: not acknowledged for \(Self.minutes(now.timeIntervalSince(page.createdAt)))\n\(page.text)"
                for target in page.current {
                    let notice = Notice(channel: page.channel, target: target, text: text, relayID: makeID(), replyTo: page.firstCopy(to: target))
                    page.add(copy: notice.relayID, to: target)
                    notices.append(notice)
                }
            }
            page.lastSent = now
            self.index(page)
            actions += [.store(page), .send(notices)]
        }
        return actions
    }

    /// The earliest repeat or escalation due; nil when none is.
    package var nextDue: Date? {
        self.pages.values.compactMap { page in self.policy(page.channel).flatMap { page.nextDue(under: $0) } }.min()
    }

    /// Forgets pages made ``memory`` or longer before `now`.
    package mutating func forget(before now: Date) {
        let limit = now.addingTimeInterval(-Self.memory)
        for (key, page) in self.pages where page.createdAt <= limit {
            self.pages.removeValue(forKey: key)
            for copy in page.copies.keys { self.byCopy.removeValue(forKey: copy) }
            for recipient in page.recipients { self.byRecipient[recipient]?.removeAll { $0 == key } }
            if let thread = page.thread, self.byThread[Self.threadKey(thread, channel: page.channel)] == key {
                self.byThread.removeValue(forKey: Self.threadKey(thread, channel: page.channel))
            }
        }
    }

    /// The page of message `id` from `source`, for `GET /messages/{id}`.
    package func page(source: String, id: String) -> Page? {
        self.pages[PageKey(source: source, id: id)]
    }

    // MARK: Parts

    private mutating func index(_ page: Page) {
        let key = page.key
        self.pages[key] = page
        for copy in page.copies.keys { self.byCopy[copy] = key }
        for recipient in page.recipients where !(self.byRecipient[recipient]?.contains(key) ?? false) {
            self.byRecipient[recipient, default: []].append(key)
        }
        if let thread = page.thread {
            let threadKey = Self.threadKey(thread, channel: page.channel)
            if !page.resolved {
                self.byThread[threadKey] = key
            } else if self.byThread[threadKey] == key {
                self.byThread.removeValue(forKey: threadKey)
            }
        }
    }

    private mutating func command(_ command: PagingCommand, page key: PageKey, from: Endpoint, replyTo: String?, at now: Date, makeID: () -> String) -> [Action] {
        guard let page = self.pages[key] else { return [] }
        let replyTo = replyTo ?? page.firstCopy(to: from)
        switch command {
        case .ack:
            return self.ack(key, by: from, how: Self.commandAck, at: now, replyTo: replyTo, makeID: makeID)
        case .silence(let duration):
            guard let url = self.policy(page.channel)?.alertmanagerURL else {
                return [.send([self.notice(page, to: from, text: "Silences need alertmanager_url in this channel's settings.", replyTo: replyTo, makeID: makeID)])]
            }
            // A silence by its group's common labels, which must name the alert: by
            // `severity` alone it would mute every alert of that severity.
            guard page.commonLabels["alertname"] != nil else {
                return [.send([self.notice(page, to: from, text: "This alert's group has no common alertname to silence by; silence it in Alertmanager.", replyTo: replyTo, makeID: makeID)])]
            }
            return [.silence(url: url, matchers: page.commonLabels, duration: duration, createdBy: from.address ?? from.description, page: key, to: from, replyTo: replyTo)]
        case .unsilence(let id):
            guard let url = self.policy(page.channel)?.alertmanagerURL else {
                return [.send([self.notice(page, to: from, text: "Silences need alertmanager_url in this channel's settings.", replyTo: replyTo, makeID: makeID)])]
            }
            // Only silences made from the chat for alerts this person was paged with.
            guard self.byRecipient[from]?.contains(where: { self.pages[$0]?.silences.contains(id) == true }) == true else {
                return [.send([self.notice(page, to: from, text: "No silence \(id) was made here for an alert you got.", replyTo: replyTo, makeID: makeID)])]
            }
            return [.unsilence(url: url, id: id, channel: page.channel, to: from, replyTo: replyTo)]
        case .unknown:
            return [.send([self.notice(page, to: from, text: PagingCommand.help, makeID: makeID)])]
        }
    }

    private mutating func ack(_ key: PageKey, by: Endpoint, how: String, at now: Date, replyTo: String?, makeID: () -> String) -> [Action] {
        guard var page = self.pages[key] else { return [] }
        let who = by.address ?? by.description
        if let earlier = page.ack {
            let text = "already acknowledged by \(earlier.by) at \(AlertAck.timestamp(earlier.at))"
            return [.send([self.notice(page, to: by, text: text, replyTo: replyTo, makeID: makeID)])]
        }
        let ack = AlertAck(how: how, by: who, at: now)
        page.ack = ack
        // Every tier stops; everyone paged hears who took it, under their own copy.
        var notices: [Notice] = []
        for recipient in page.recipients {
            let notice = self.notice(page, to: recipient, text: "acknowledged by \(who)", replyTo: recipient == by ? replyTo : page.firstCopy(to: recipient), makeID: makeID)
            page.add(copy: notice.relayID, to: recipient)
            notices.append(notice)
        }
        self.index(page)
        return [.store(page), .send(notices), .announce(ack, page: key, channel: page.channel)]
    }

    private func notice(_ page: Page, to target: Endpoint, text: String, replyTo: String? = nil, makeID: () -> String) -> Notice {
        Notice(channel: page.channel, target: target, text: text, relayID: makeID(), replyTo: replyTo)
    }

    /// "40 s" under a minute, else "5 min", "1 h 5 min" (whole minutes).
    package static func minutes(_ interval: TimeInterval) -> String {
        if interval < 59.5 { return "\(max(0, Int(interval.rounded()))) s" }
        let minutes = Int((interval / 60).rounded())
        return minutes < 60 ? "\(minutes) min" : "\(minutes / 60) h" + (minutes % 60 == 0 ? "" : " \(minutes % 60) min")
    }
}
