import Foundation
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeState

/// The paging machine (issue 24) without I/O: acknowledgements by reply, reaction, marker
/// and word; repeats and escalations at their times; commands; resolution threading.
@Suite("Paging state machine")
struct PagingStateMachineTests {
    static let web = Endpoint(transport: "web")
    static let alice = Endpoint(transport: "work", address: "alice@work.example")
    static let bob = Endpoint(transport: "work", address: "bob@work.example")
    static let carol = Endpoint(transport: "work", address: "carol@work.example")
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func policy(repeatEvery: Duration? = nil, ackKinds: Set<PagingPolicy.AckKind> = [.reply, .reaction]) -> PagingPolicy {
        var policy = PagingPolicy()
        policy.isPaging = true
        policy.ackKinds = ackKinds
        policy.repeatInterval = repeatEvery
        policy.tiers = [PagingPolicy.Tier(after: .seconds(300), to: [Self.bob]), PagingPolicy.Tier(after: .seconds(600), to: [Self.carol])]
        policy.alertmanagerURL = "http://127.0.0.1:9093"
        return policy
    }

    /// A counter for relay ids.
    final class IDs: @unchecked Sendable {
        var next = 0
        func make() -> String {
            self.next += 1
            return "id-\(self.next)"
        }
    }

    static func alert(id: String = "web-1", priority: Int? = 5, notification: AlertNotification? = nil) -> InboundMessage {
        var message = InboundMessage(source: Self.web, sender: "web", nick: "web", id: id, body: "disk full", channel: "oncall")
        message.priority = priority
        message.notification = notification
        return message
    }

    static func reply(_ body: String, to relayID: String? = nil, from: Endpoint = Self.alice) -> InboundMessage {
        var message = InboundMessage(source: from, sender: from.address ?? "", nick: "alice", id: "in-\(body.hashValue)", body: body)
        message.content.replyTo = relayID
        return message
    }

    static func paged(_ policy: PagingPolicy = Self.policy(), message: InboundMessage = Self.alert()) -> PagingStateMachine {
        var machine = PagingStateMachine(policies: ["oncall": policy])
        let page = machine.page(for: message, channel: "oncall", text: "[oncall] web: disk full", copies: [("copy-a", Self.alice)], postponed: [], at: Self.start)
        #expect(page != nil)
        if let page { machine.restore(page) }
        return machine
    }

    static func notices(_ actions: [PagingStateMachine.Action]) -> [PagingStateMachine.Notice] {
        actions.flatMap { action -> [PagingStateMachine.Notice] in
            if case .send(let notices) = action { return notices }
            return []
        }
    }

    @Test("unacknowledged, an urgent alert escalates to bob after 5 min, then to carol 10 min later, each marked with who did not take it")
    func escalatesTierByTier() throws {
        var machine = Self.paged()
        let ids = IDs()
        #expect(machine.nextDue == Self.start.addingTimeInterval(300))
        #expect(machine.due(at: Self.start.addingTimeInterval(299), makeID: ids.make).isEmpty)
        let first = Self.notices(machine.due(at: Self.start.addingTimeInterval(300), makeID: ids.make))
        #expect(first.map(\.target) == [Self.bob])
        #expect(first.first?.text == "escalated: not acknowledged by alice@work.example for 5 min\n[oncall] web: disk full")
        #expect(machine.nextDue == Self.start.addingTimeInterval(900))
        let second = Self.notices(machine.due(at: Self.start.addingTimeInterval(900), makeID: ids.make))
        #expect(second.map(\.target) == [Self.carol])
        #expect(second.first?.text.hasPrefix("escalated: not acknowledged by alice@work.example, bob@work.example for 10 min") == true)
        #expect(machine.nextDue == nil)
        let page = try #require(machine.page(source: "web", id: "web-1"))
        #expect(page.escalations.map(\.to) == [["work:bob@work.example"], ["work:carol@work.example"]])
    }

    @Test("a reply to the copy acknowledges: every tier stops, everyone paged hears who took it, and the channel's subscribers are told")
    func replyAcknowledges() throws {
        var machine = Self.paged()
        let ids = IDs()
        _ = machine.due(at: Self.start.addingTimeInterval(300), makeID: ids.make)
        let reading = machine.received(Self.reply("on it", to: "copy-a"), from: Self.alice, at: Self.start.addingTimeInterval(400), converses: false, makeID: ids.make)
        guard case .handled(let actions) = reading else { Issue.record("not handled: \(reading)"); return }
        let notices = Self.notices(actions)
        #expect(Set(notices.map(\.target)) == [Self.alice, Self.bob])
        #expect(notices.allSatisfy { $0.text == "acknowledged by alice@work.example" })
        #expect(notices.first { $0.target == Self.alice }?.replyTo == "copy-a")
        #expect(actions.contains { if case .announce(let ack, _, "oncall") = $0 { ack.how == "reply" && ack.by == "alice@work.example" } else { false } })
        #expect(machine.nextDue == nil)
        #expect(machine.due(at: Self.start.addingTimeInterval(10_000), makeID: ids.make).isEmpty)
        // A second acknowledgement only hears who was first.
        let again = machine.received(Self.reply("ack", from: Self.bob), from: Self.bob, at: Self.start.addingTimeInterval(500), converses: false, makeID: ids.make)
        guard case .handled(let later) = again else { Issue.record("not handled"); return }
        #expect(Self.notices(later).map(\.text) == ["already acknowledged by alice@work.example at 2027-01-15T08:06:40Z"])
    }

    @Test("a reply or reaction to a copy that went to someone else acknowledges nothing; the copy's own recipient still can")
    func replyToSomeoneElsesCopy() throws {
        var machine = Self.paged()
        let ids = IDs()
        _ = machine.due(at: Self.start.addingTimeInterval(300), makeID: ids.make)
        let reading = machine.received(Self.reply("on it", to: "copy-a", from: Self.bob), from: Self.bob, at: Self.start.addingTimeInterval(400), converses: false, makeID: ids.make)
        if case .handled(let actions) = reading {
            #expect(!actions.contains { if case .announce = $0 { true } else { false } }, "bob acknowledged through alice's copy: \(actions)")
        }
        var reaction = Self.reply("", from: Self.bob)
        reaction.body = nil
        reaction.content = MessageContent(reactionTo: "copy-a", reactions: ["👍"])
        if case .handled(let actions) = machine.received(reaction, from: Self.bob, at: Self.start.addingTimeInterval(410), converses: false, makeID: ids.make) {
            #expect(!actions.contains { if case .announce = $0 { true } else { false } }, "bob acknowledged by reacting to alice's copy: \(actions)")
        }
        #expect(machine.nextDue != nil, "the page is still open")
        let own = machine.received(Self.reply("on it", to: "copy-a"), from: Self.alice, at: Self.start.addingTimeInterval(420), converses: false, makeID: ids.make)
        guard case .handled(let actions) = own else { Issue.record("not handled: \(own)"); return }
        let notices = Self.notices(actions)
        #expect(!notices.isEmpty && notices.allSatisfy { $0.text == "acknowledged by alice@work.example" }, "\(notices)")
    }

    @Test("'ack' as the next message acknowledges the newest page; a reaction does; a displayed marker only where ack lists it (delivery receipts are not read here: the daemon test shows one is no ack)")
    func otherAcknowledgements() throws {
        let ids = IDs()
        var byWord = Self.paged()
        guard case .handled(let word) = byWord.received(Self.reply("ACK"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make) else {
            Issue.record("not handled"); return
        }
        #expect(word.contains { if case .announce(let ack, _, _) = $0 { ack.how == "command" } else { false } })

        var byReaction = Self.paged()
        var reaction = Self.reply("")
        reaction.body = nil
        reaction.content = MessageContent(reactionTo: "copy-a", reactions: ["👍"])
        guard case .handled(let reacted) = byReaction.received(reaction, from: Self.alice, at: Self.start, converses: false, makeID: ids.make) else {
            Issue.record("not handled"); return
        }
        #expect(reacted.contains { if case .announce(let ack, _, _) = $0 { ack.how == "reaction" } else { false } })

        var markerOff = Self.paged()
        #expect(markerOff.displayed(relayID: "copy-a", from: Self.alice, at: Self.start, makeID: ids.make).isEmpty)
        var markerOn = Self.paged(Self.policy(ackKinds: [.displayed]))
        #expect(markerOn.displayed(relayID: "copy-a", from: Self.bob, at: Self.start, makeID: ids.make).isEmpty, "a marker from someone the copy did not go to")
        #expect(markerOn.displayed(relayID: "copy-a", from: Self.alice, at: Self.start, makeID: ids.make).contains {
            if case .announce(let ack, _, _) = $0 { ack.how == "displayed" } else { false }
        })
        #expect(markerOn.displayed(relayID: "copy-a", from: Self.alice, at: Self.start, makeID: ids.make).isEmpty, "after the ack a marker says nothing")
    }

    @Test("repeat resends to the current tier under its first copy; alerts below escalate_min_priority are neither repeated nor escalated")
    func repeatsAndPriority() throws {
        let ids = IDs()
        var policy = Self.policy(repeatEvery: .seconds(120))
        policy.tiers = []
        var machine = Self.paged(policy)
        let repeated = Self.notices(machine.due(at: Self.start.addingTimeInterval(120), makeID: ids.make))
        #expect(repeated.map(\.target) == [Self.alice])
        #expect(repeated.first?.replyTo == "copy-a")
        #expect(repeated.first?.text.hasPrefix("repeated: not acknowledged for 2 min") == true)
        #expect(machine.nextDue == Self.start.addingTimeInterval(240))

        // A recipient whose copy waits for the end of quiet hours is not repeated to.
        var quiet = PagingStateMachine(policies: ["oncall": policy])
        let page = try #require(quiet.page(for: Self.alert(), channel: "oncall", text: "t", copies: [("q", Self.alice), ("b", Self.bob)], postponed: [Self.alice], at: Self.start))
        quiet.restore(page)
        #expect(Self.notices(quiet.due(at: Self.start.addingTimeInterval(120), makeID: ids.make)).map(\.target) == [Self.bob])

        let low = Self.paged(policy, message: Self.alert(priority: 3))
        #expect(low.nextDue == nil)
        var mapped = PagingPolicy()
        #expect(mapped.priority(of: Self.alert(priority: nil, notification: AlertNotification(kind: "alertmanager", group: "g", status: "firing", alerts: [], commonLabels: [:], severity: "critical"))) == 5)
        #expect(mapped.priority(of: Self.alert(priority: nil)) == 3)
        mapped.severityPriority = ["page": 4]
        #expect(mapped.priority(of: Self.alert(priority: 2, notification: AlertNotification(kind: "grafana", group: "g", status: "firing", alerts: [], commonLabels: [:], severity: "page"))) == 2)
    }

    @Test("commands: silence with the group's common labels and the sender as creator; unsilence; other words get the help line; strangers and conversation in a two-way channel are routed")
    func commands() throws {
        let ids = IDs()
        let notification = AlertNotification(kind: "alertmanager", group: "{}:{alertname=\"DiskFull\"}", status: "firing", alerts: ["f1"], commonLabels: ["alertname": "DiskFull", "job": "node"])
        var machine = Self.paged(message: Self.alert(notification: notification))
        guard case .handled(let silence) = machine.received(Self.reply("silence 2h"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make) else {
            Issue.record("not handled"); return
        }
        let key = PageKey(source: "web", id: "web-1")
        #expect(silence == [.silence(url: "http://127.0.0.1:9093", matchers: ["alertname": "DiskFull", "job": "node"], duration: .seconds(7200), createdBy: "alice@work.example", page: key, to: Self.alice, replyTo: "copy-a")])
        // Only a silence made here for an alert alice got may be ended from the chat.
        guard case .handled(let foreign) = machine.received(Self.reply("unsilence 1f2e-77"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make) else {
            Issue.record("not handled"); return
        }
        #expect(Self.notices(foreign).map(\.text) == ["No silence 1f2e-77 was made here for an alert you got."])
        _ = machine.silenced(key, id: "1f2e-77")
        guard case .handled(let unsilence) = machine.received(Self.reply("unsilence 1f2e-77"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make) else {
            Issue.record("not handled"); return
        }
        #expect(unsilence == [.unsilence(url: "http://127.0.0.1:9093", id: "1f2e-77", channel: "oncall", to: Self.alice, replyTo: "copy-a")])
        // A group whose common labels do not name the alert is not silenced from the chat.
        var broad = Self.paged(message: Self.alert(notification: AlertNotification(kind: "alertmanager", group: "g", status: "firing", alerts: [], commonLabels: ["severity": "warning"])))
        guard case .handled(let refused) = broad.received(Self.reply("silence 30d"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make) else {
            Issue.record("not handled"); return
        }
        #expect(Self.notices(refused).first?.text.hasPrefix("This alert's group has no common alertname") == true)
        guard case .handled(let help) = machine.received(Self.reply("what is this"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make) else {
            Issue.record("not handled"); return
        }
        #expect(Self.notices(help).map(\.text) == [PagingCommand.help])
        #expect(machine.received(Self.reply("hello", from: Self.carol), from: Self.carol, at: Self.start, converses: false, makeID: ids.make) == .route)
        #expect(machine.received(Self.reply("chatting"), from: Self.alice, at: Self.start, converses: true, makeID: ids.make) == .route)
        // A file or a correction is never taken for a command.
        var file = Self.reply("https://x.example/a.png")
        file.content.url = "https://x.example/a.png"
        #expect(machine.received(file, from: Self.alice, at: Self.start, converses: false, makeID: ids.make) == .route)
        // Once the alert is acked, words that are no command are no longer answered with help.
        _ = machine.received(Self.reply("ack"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make)
        #expect(machine.received(Self.reply("thanks"), from: Self.alice, at: Self.start, converses: false, makeID: ids.make) == .route)
    }

    @Test("a RESOLVED notification threads under each recipient's FIRING copy and ends the escalation")
    func resolution() throws {
        let firing = AlertNotification(kind: "alertmanager", group: "g1", status: "firing", alerts: ["f1"], commonLabels: [:])
        var machine = Self.paged(message: Self.alert(notification: firing))
        #expect(machine.nextDue != nil)
        let outcome = machine.resolution(of: firing.threadKey, channel: "oncall")
        let resolved = try #require(outcome)
        #expect(resolved.replyTo == [Self.alice: "copy-a"])
        #expect(resolved.page.resolved)
        #expect(machine.nextDue != nil, "taken in only once committed")
        machine.restore(resolved.page)
        #expect(machine.nextDue == nil)
        #expect(machine.resolution(of: firing.threadKey, channel: "oncall") == nil, "resolved once")
        #expect(machine.resolution(of: "other", channel: "oncall") == nil)
        // The same group paged into another channel is that channel's thread.
        let two = Self.paged(message: Self.alert(notification: firing))
        #expect(two.resolution(of: firing.threadKey, channel: "elsewhere") == nil)
    }

    @Test("waits read as seconds under a minute, else minutes and hours")
    func waits() {
        #expect(PagingStateMachine.minutes(2.2) == "2 s")
        #expect(PagingStateMachine.minutes(300) == "5 min")
        #expect(PagingStateMachine.minutes(3900) == "1 h 5 min")
        #expect(PagingStateMachine.minutes(7200) == "2 h")
    }

    @Test("command words: durations from 1 min to 30 days; anything else is not a command")
    func commandWords() {
        #expect(PagingCommand("ack") == .ack)
        #expect(PagingCommand(" Ack ") == .ack)
        #expect(PagingCommand("silence 2h") == .silence(.seconds(7200)))
        #expect(PagingCommand("silence 1h30m") == .silence(.seconds(5400)))
        #expect(PagingCommand("silence 30d") == .silence(.seconds(30 * 86_400)))
        #expect(PagingCommand("silence 31d") == .unknown("silence 31d"))
        #expect(PagingCommand("silence 10s") == .unknown("silence 10s"))
        #expect(PagingCommand("silence forever") == .unknown("silence forever"))
        #expect(PagingCommand("silence") == .unknown("silence"))
        #expect(PagingCommand("unsilence 3f9a") == .unsilence(id: "3f9a"))
        #expect(PagingCommand("ack it now") == .unknown("ack it now"))
        #expect(PagingCommand("") == .unknown(""))
    }

    @Test("the same notification within the window answers the first id; after it, or with another status, it is new")
    func dedupe() {
        var dedupe = NotificationDedupe()
        let window = Duration.seconds(300)
        let firing = AlertNotification(kind: "alertmanager", group: "g", status: "firing", alerts: ["b", "a"], commonLabels: [:])
        let key = NotificationDedupe.key(channel: "oncall", firing)
        #expect(dedupe.lookup(key, window: window, at: Self.start) == .new)
        dedupe.remember(key, id: "web-1", at: Self.start)
        let replica = AlertNotification(kind: "alertmanager", group: "g", status: "firing", alerts: ["a", "b"], commonLabels: ["x": "y"])
        let replicaKey = NotificationDedupe.key(channel: "oncall", replica)
        #expect(dedupe.lookup(replicaKey, window: window, at: Self.start) == .pending, "the first copy's commit is under way")
        dedupe.committed(key)
        #expect(dedupe.lookup(replicaKey, window: window, at: Self.start.addingTimeInterval(299)) == .duplicate(of: "web-1"))
        #expect(dedupe.lookup(key, window: window, at: Self.start.addingTimeInterval(300)) == .new)
        #expect(dedupe.lookup(NotificationDedupe.key(channel: "other", firing), window: window, at: Self.start) == .new)
        // RESOLVED is news, and after it the group firing again is news too.
        let resolved = AlertNotification(kind: "alertmanager", group: "g", status: "resolved", alerts: ["a", "b"], commonLabels: [:])
        let resolvedKey = NotificationDedupe.key(channel: "oncall", resolved)
        #expect(dedupe.lookup(resolvedKey, window: window, at: Self.start.addingTimeInterval(10)) == .new)
        dedupe.remember(resolvedKey, id: "web-2", at: Self.start.addingTimeInterval(10), committed: true)
        #expect(dedupe.lookup(key, window: window, at: Self.start.addingTimeInterval(20)) == .new)
        // A commit that failed: a retry is new.
        dedupe.forget(resolvedKey)
        #expect(dedupe.lookup(resolvedKey, window: window, at: Self.start.addingTimeInterval(11)) == .new)
    }

    @Test("a page survives its JSON column; an unreadable column reads as nil")
    func pageColumn() throws {
        var machine = Self.paged()
        _ = machine.due(at: Self.start.addingTimeInterval(300), makeID: IDs().make)
        let page = try #require(machine.page(source: "web", id: "web-1"))
        #expect(PageColumn.decode(PageColumn.encode(page)) == page)
        #expect(PageColumn.decode("{\"nope\": 1}") == nil)
        var restored = PagingStateMachine(policies: ["oncall": Self.policy()])
        restored.restore(page)
        #expect(restored.nextDue == Self.start.addingTimeInterval(900))
    }
}
