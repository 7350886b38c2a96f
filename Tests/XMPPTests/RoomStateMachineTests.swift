import Testing
import TestSupport

@testable import XMPP

/// One room as a pure machine (issue 10): joins, nick changes and conflicts, rejoins after
/// kicks, shutdowns and failed self-pings, stops after bans; echoes by id, never by nick.
@Suite("RoomStateMachine")
struct RoomStateMachineTests {
    typealias Machine = RoomStateMachine<ManualClock.Instant>
    static let t0 = ManualClock.Instant()
    static let room = "dev@muc.example.test"
    static let muc = "http://jabber.org/protocol/muc#user"

    static func at(_ seconds: Int) -> ManualClock.Instant { t0.advanced(by: .seconds(seconds)) }

    static func machine(password: String? = nil) throws -> Machine {
        Machine(
            configuration: RoomConfiguration(jid: try JID(room), nick: "bridge", password: password),
            timings: RoomTimings(pingInterval: .seconds(300), pingTimeout: .seconds(30), rejoinAfterKick: .seconds(60), retryDelay: .seconds(5), maximumRetryDelay: .seconds(40))
        )
    }

    static func stanza(_ xml: String) throws -> XMLElement {
        let result = parseStream(testStreamHeader + xml)
        if let error = result.error { throw error }
        return try #require(result.events.compactMap(\.element).last)
    }

    static func presence(_ nick: String, type: String? = nil, codes: [Int] = [], item: String = "", reason: String? = nil, extra: String = "") throws -> Presence {
        let status = codes.map { "<status code='\($0)'/>" }.joined()
        let typeAttribute = type.map { " type='\($0)'" } ?? ""
        let reasonElement = reason.map { "<reason>\($0)</reason>" } ?? ""
        return try Presence(
            element: stanza("<presence from='\(room)/\(nick)'\(typeAttribute)><x xmlns='\(muc)'><item affiliation='none' role='participant'\(item)>\(reasonElement)</item>\(status)</x>\(extra)</presence>")
        )
    }

    static func error(_ nick: String, _ condition: String, type: String = "cancel") throws -> Presence {
        try Presence(element: stanza("<presence from='\(room)/\(nick)' type='error'><error type='\(type)'><\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>"))
    }

    static func message(_ nick: String?, body: String? = "hi", id: String = "m1", originID: String? = nil, subject: String? = nil, type: String = "groupchat") throws -> Message {
        let from = nick.map { "\(room)/\($0)" } ?? room
        var children = ""
        if let subject { children += "<subject>\(subject)</subject>" }
        if let body { children += "<body>\(body)</body>" }
        if let originID { children += "<origin-id xmlns='urn:xmpp:sid:0' id='\(originID)'/>" }
        return try Message(element: stanza("<message from='\(from)' type='\(type)' id='\(id)'>\(children)</message>"))
    }

    /// Joins as `nick` and returns the machine in the room.
    static func joined(nick: String = "bridge") throws -> Machine {
        var machine = try Self.machine()
        _ = machine.connected(now: Self.t0)
        _ = machine.received(try Self.presence(nick, codes: [110]), now: Self.t0)
        _ = machine.received(try Self.message(nil, body: nil, subject: "topic"), now: Self.t0)
        return machine
    }

    @Test("connected: a join presence to room/nick without history and with the password; self-presence (110) joins")
    func join() throws {
        var machine = try Self.machine(password: "s3cret")
        let actions = machine.connected(now: Self.t0)
        guard case .send(let element) = try #require(actions.first) else { Issue.record("no join sent"); return }
        #expect(element[attribute: "to"] == "\(Self.room)/bridge")
        let x = try #require(element.firstChild(named: "x", namespace: "http://jabber.org/protocol/muc"))
        #expect(x.firstChild(named: "history")?[attribute: "maxstanzas"] == "0")
        #expect(x.firstChild(named: "password")?.text == "s3cret")
        #expect(!machine.isJoined)
        // Occupants listed before our own presence are not announced as arrivals.
        #expect(machine.received(try Self.presence("alice"), now: Self.t0).isEmpty)
        #expect(machine.received(try Self.presence("bridge", codes: [110]), now: Self.t0) == [.joined(nick: "bridge")])
        #expect(machine.isJoined)
        #expect(machine.occupants == ["alice"])
        #expect(machine.received(try Self.presence("bob"), now: Self.t0) == [.occupant(nick: "bob", joined: true)])
        #expect(machine.received(try Self.presence("bob", type: "unavailable"), now: Self.t0) == [.occupant(nick: "bob", joined: false)])
    }

    @Test("status 201 (we created the room): the instant-room configuration is accepted")
    func createdRoom() throws {
        var machine = try Self.machine()
        _ = machine.connected(now: Self.t0)
        #expect(machine.received(try Self.presence("bridge", codes: [110, 201]), now: Self.t0) == [.joined(nick: "bridge"), .configureInstantRoom])
    }

    @Test("the subject sent on joining is no change; a later subject is; history with a delay is not passed on")
    func subjectOnJoin() throws {
        var machine = try Self.machine()
        _ = machine.connected(now: Self.t0)
        _ = machine.received(try Self.presence("bridge", codes: [110]), now: Self.t0)
        let delayed = try Message(
            element: Self.stanza("<message from='\(Self.room)/alice' type='groupchat' id='h1'><body>old</body><delay xmlns='urn:xmpp:delay' stamp='2020-01-01T00:00:00Z'/></message>")
        )
        #expect(machine.received(delayed, now: Self.t0) == .ignored("room history (gaps are filled from the room's archive)"))
        #expect(machine.received(try Self.message("alice", body: nil, subject: "old topic"), now: Self.t0) == .ignored("the subject sent on joining"))
        #expect(machine.received(try Self.message("alice", body: nil, subject: "new topic"), now: Self.t0) == .occupant(nick: "alice"))
        #expect(machine.received(try Self.message("alice"), now: Self.t0) == .occupant(nick: "alice"))
    }

    @Test("our reflections are echoes by origin-id or id, whatever the nick; others' messages relay even under our nick")
    func echoesByID() throws {
        var machine = try Self.joined()
        machine.sending(id: "relay-1")
        machine.sending(id: "relay-2")
        #expect(machine.received(try Self.message("bridge", id: "server-changed", originID: "relay-1"), now: Self.t0) == .echo)
        #expect(machine.received(try Self.message("someone-else", id: "relay-2"), now: Self.t0) == .echo)
        // A message from "our" nick that we never sent (a nick taken over) is relayed.
        #expect(machine.received(try Self.message("bridge", id: "x9", originID: "x9"), now: Self.t0) == .occupant(nick: "bridge"))
    }

    @Test("a message counts as reflected once the room echoed it back, and not before (XEP-0045 §7.2.2)")
    func reflectedOnceEchoed() throws {
        var machine = try Self.joined()
        machine.sending(id: "relay-1")
        machine.sending(id: "relay-2")
        #expect(!machine.reflected("relay-1") && !machine.reflected("relay-2") && !machine.reflected("never-sent"))
        #expect(machine.received(try Self.message("bridge", id: "server-changed", originID: "relay-1"), now: Self.t0) == .echo)
        #expect(machine.reflected("relay-1"))
        #expect(!machine.reflected("relay-2"))
        // Sending the same id again (said again after a lost session) keeps what the room showed.
        machine.sending(id: "relay-1")
        #expect(machine.reflected("relay-1"))
        _ = machine.disconnected()
        #expect(machine.reflected("relay-1"), "a lost connection does not unsay what the room reflected")
    }

    @Test("the remembered ids are bounded; the oldest are forgotten first")
    func sentIDsBounded() throws {
        var machine = try Self.joined()
        for index in 0..<(Machine.rememberedSentIDs * 3) { machine.sending(id: "r\(index)") }
        #expect(machine.received(try Self.message("bridge", id: "r0"), now: Self.t0) == .occupant(nick: "bridge"))
        #expect(machine.received(try Self.message("bridge", id: "r\(Machine.rememberedSentIDs * 3 - 1)"), now: Self.t0) == .echo)
    }

    @Test("private messages and messages from the room itself are not relayed")
    func privateMessages() throws {
        var machine = try Self.joined()
        guard case .ignored = machine.received(try Self.message("alice", type: "chat"), now: Self.t0) else { Issue.record("PM relayed"); return }
        guard case .ignored = machine.received(try Self.message(nil, body: "room notice"), now: Self.t0) else { Issue.record("room notice relayed"); return }
    }

    @Test("nick conflict: the nick with _ appended, then again; after the last variant the room stops")
    func nickConflict() throws {
        var machine = try Self.machine()
        _ = machine.connected(now: Self.t0)
        var actions = machine.received(try Self.error("bridge", "conflict"), now: Self.t0)
        guard case .send(let join) = try #require(actions.first) else { Issue.record("no rejoin"); return }
        #expect(join[attribute: "to"] == "\(Self.room)/bridge_")
        actions = machine.received(try Self.error("bridge_", "conflict"), now: Self.t0)
        guard case .send(let again) = try #require(actions.first) else { Issue.record("no rejoin"); return }
        #expect(again[attribute: "to"] == "\(Self.room)/bridge__")
        #expect(machine.received(try Self.presence("bridge__", codes: [110]), now: Self.t0) == [.joined(nick: "bridge__")])
        #expect(machine.nick == "bridge__")
        var stopped = try Self.machine()
        _ = stopped.connected(now: Self.t0)
        var last: [Machine.Action] = []
        for _ in 0..<5 { last = stopped.received(try Self.error(stopped.nick, "conflict"), now: Self.t0) }
        guard case .stopped = try #require(last.first) else { Issue.record("not stopped: \(last)"); return }
    }

    @Test("nick changed by the service (210) or renamed (303): followed; echoes still by id")
    func nickChanges() throws {
        var machine = try Self.machine()
        _ = machine.connected(now: Self.t0)
        #expect(machine.received(try Self.presence("Bridge Bot", codes: [110, 210]), now: Self.t0) == [.joined(nick: "Bridge Bot")])
        #expect(machine.nick == "Bridge Bot")
        #expect(machine.received(try Self.presence("Bridge Bot", type: "unavailable", codes: [110, 303], item: " nick='bot2'"), now: Self.t0).isEmpty)
        #expect(machine.nick == "bot2")
        #expect(machine.received(try Self.presence("bot2", codes: [110]), now: Self.t0).isEmpty)
        machine.sending(id: "relay-7")
        #expect(machine.received(try Self.message("bot2", originID: "relay-7"), now: Self.t0) == .echo)
        // Another occupant's rename is neither a leave nor an arrival.
        _ = machine.received(try Self.presence("alice"), now: Self.t0)
        #expect(machine.received(try Self.presence("alice", type: "unavailable", codes: [303], item: " nick='alice2'"), now: Self.t0).isEmpty)
        #expect(machine.received(try Self.presence("alice2"), now: Self.t0).isEmpty)
        #expect(machine.occupants == ["alice2"])
    }

    @Test("kicked (307): out, rejoined after the configured delay")
    func kick() throws {
        var machine = try Self.joined()
        let actions = machine.received(try Self.presence("bridge", type: "unavailable", codes: [110, 307], reason: "spam"), now: Self.at(10))
        guard case .left(let reason) = try #require(actions.first) else { Issue.record("not left"); return }
        #expect(reason.contains("kicked") && reason.contains("spam"))
        #expect(machine.nextDeadline == Self.at(70))
        #expect(machine.timerFired(now: Self.at(69)).isEmpty)
        guard case .send(let join) = try #require(machine.timerFired(now: Self.at(70)).first) else { Issue.record("no rejoin"); return }
        #expect(join[attribute: "to"] == "\(Self.room)/bridge")
    }

    @Test("shutdown (332) and technical removal (333): rejoined with backoff")
    func shutdownAndTechnical() throws {
        for code in [332, 333] {
            var machine = try Self.joined()
            #expect(machine.received(try Self.presence("bridge", type: "unavailable", codes: [110, code]), now: Self.at(0)).count == 1)
            #expect(machine.nextDeadline == Self.at(5))
            guard case .send = try #require(machine.timerFired(now: Self.at(5)).first) else { Issue.record("no rejoin after \(code)"); return }
            // The rejoin fails for a passing reason: the next wait doubles.
            _ = machine.received(try Self.error("bridge", "service-unavailable", type: "wait"), now: Self.at(5))
            #expect(machine.nextDeadline == Self.at(15))
        }
    }

    @Test("ban, destroyed room, members-only, wrong password: the room stops with a reason; a reconnect does not rejoin it")
    func permanentRefusals() throws {
        var banned = try Self.joined()
        guard case .stopped(let reason) = try #require(banned.received(try Self.presence("bridge", type: "unavailable", codes: [110, 301]), now: Self.t0).first) else {
            Issue.record("ban did not stop the room")
            return
        }
        #expect(reason.contains("banned"))
        _ = banned.disconnected()
        #expect(banned.connected(now: Self.t0).isEmpty)

        var destroyed = try Self.joined()
        let destroy = try Self.presence("bridge", type: "unavailable", codes: [110], extra: "")
        var element = destroy.element
        var x = XMLElement(name: "x", namespace: Self.muc)
        var destroyElement = XMLElement(name: "destroy", namespace: Self.muc, attributes: [XMLAttribute(name: "jid", value: "new@muc.example.test")])
        var why = XMLElement(name: "reason", namespace: Self.muc)
        why.append(text: "moved")
        destroyElement.append(why)
        x.append(destroyElement)
        element.children = [.element(x)]
        guard case .stopped(let destroyedReason) = try #require(destroyed.received(try Presence(element: element), now: Self.t0).first) else {
            Issue.record("destroy did not stop the room")
            return
        }
        #expect(destroyedReason.contains("destroyed") && destroyedReason.contains("new@muc.example.test"))

        for (condition, expected) in [("registration-required", "members-only"), ("not-authorized", "password"), ("forbidden", "banned")] {
            var machine = try Self.machine()
            _ = machine.connected(now: Self.t0)
            guard case .stopped(let why) = try #require(machine.received(try Self.error("bridge", condition), now: Self.t0).first) else {
                Issue.record("\(condition) did not stop the room")
                return
            }
            #expect(why.contains(expected))
        }
    }

    @Test("quiet room: a self-ping; 'not joined' answers rejoin, a result or a forwarded refusal keeps us, no answer rejoins")
    func selfPing() throws {
        var machine = try Self.joined()
        #expect(machine.nextDeadline == Self.at(300))
        _ = machine.received(try Self.message("alice"), now: Self.at(100))
        #expect(machine.timerFired(now: Self.at(300)).isEmpty)
        #expect(machine.timerFired(now: Self.at(400)) == [.selfPing(to: try JID("\(Self.room)/bridge"))])
        #expect(machine.nextDeadline == nil)
        #expect(machine.selfPingAnswered(Machine.selfPingOutcome(answered: true, condition: nil), now: Self.at(401)).isEmpty)
        #expect(machine.isJoined)
        #expect(machine.timerFired(now: Self.at(701)).count == 1)
        #expect(machine.selfPingAnswered(Machine.selfPingOutcome(answered: true, condition: .featureNotImplemented), now: Self.at(702)).isEmpty)
        #expect(machine.isJoined)
        #expect(machine.timerFired(now: Self.at(1002)).count == 1)
        let rejoin = machine.selfPingAnswered(Machine.selfPingOutcome(answered: true, condition: .notAcceptable), now: Self.at(1003))
        guard case .left = try #require(rejoin.first), case .send = try #require(rejoin.last) else { Issue.record("no rejoin: \(rejoin)"); return }
        #expect(!machine.isJoined)
        #expect(Machine.selfPingOutcome(answered: false, condition: nil) == .notJoined("no answer to a self-ping"))
        guard case .unreachable = Machine.selfPingOutcome(answered: true, condition: .remoteServerNotFound) else { Issue.record("unreachable misread"); return }
    }

    @Test("a self-ping cut off by a lost connection that may be resumed is no longer awaited: the next one comes due")
    func selfPingCutOff() throws {
        var machine = try Self.joined()
        #expect(machine.timerFired(now: Self.at(300)) == [.selfPing(to: try JID("\(Self.room)/bridge"))])
        #expect(machine.nextDeadline == nil, "waiting for the answer")
        machine.connectionInterrupted()
        #expect(machine.isJoined, "a resumed stream keeps us in the room")
        #expect(machine.nextDeadline != nil, "a self-ping is due again")
    }

    @Test("a join left unanswered is tried again; a lost connection leaves every room, and connecting joins again")
    func joinTimeoutAndReconnect() throws {
        var machine = try Self.machine()
        _ = machine.connected(now: Self.t0)
        #expect(machine.nextDeadline == Self.at(30))
        #expect(machine.timerFired(now: Self.at(30)).isEmpty)
        #expect(machine.nextDeadline == Self.at(35))
        guard case .send = try #require(machine.timerFired(now: Self.at(35)).first) else { Issue.record("no retry"); return }
        _ = machine.received(try Self.presence("bridge", codes: [110]), now: Self.at(36))
        let wasJoined = machine.disconnected()
        #expect(wasJoined)
        #expect(machine.state == .offline)
        #expect(machine.occupants.isEmpty)
        guard case .send = try #require(machine.connected(now: Self.at(50)).first) else { Issue.record("no join on reconnect"); return }
    }

    static func refusal(_ condition: String) throws -> Message {
        try Message(
            element: Self.stanza(
                "<message from='\(Self.room)' type='error' id='relay-3'><error type='cancel'><\(condition) xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>"
            )
        )
    }

    @Test("not-acceptable or an unavailable service from the room: rejoin, and the refused message is worth sending again, in any state")
    func refusedForNow() throws {
        for condition in ["not-acceptable", "service-unavailable", "remote-server-timeout", "item-not-found"] {
            var machine = try Self.joined()
            guard case .refusedForNow(let actions) = machine.received(try Self.refusal(condition), now: Self.t0) else {
                Issue.record("\(condition) not recognised")
                return
            }
            guard case .left = actions.first, case .send = actions.last else { Issue.record("no rejoin after \(condition)"); return }
        }
        // Kicked (waiting to rejoin): a message that was in flight is still only refused for now.
        var kicked = try Self.joined()
        _ = kicked.received(try Self.presence("bridge", type: "unavailable", codes: [110, 307]), now: Self.t0)
        #expect(kicked.received(try Self.refusal("not-acceptable"), now: Self.t0) == .refusedForNow([]))
        // No voice is not a passing refusal.
        var muted = try Self.joined()
        #expect(muted.received(try Self.refusal("forbidden"), now: Self.t0) == .ignored("error"))
    }

    @Test("a message the room refused and that is sent again waits for its reflection anew: its old refusal does not settle the new attempt")
    func refusedThenSentAgain() throws {
        var machine = try Self.joined()
        machine.sending(id: "relay-3")
        #expect(!machine.settled("relay-3"), "sent: waits for its reflection")
        _ = machine.received(try Self.refusal("not-acceptable"), now: Self.t0)
        #expect(machine.settled("relay-3"), "refused: the bounce decides")
        _ = machine.received(try Self.presence("bridge", codes: [110]), now: Self.t0)
        machine.sending(id: "relay-3")
        #expect(!machine.settled("relay-3"), "sent again: waits for its reflection again")
        _ = machine.received(try Message(element: Self.stanza("<message from='\(Self.room)/bridge' type='groupchat' id='relay-3'><body>x</body></message>")), now: Self.t0)
        #expect(machine.reflected("relay-3"))
    }

    @Test("leaving on purpose: an unavailable presence to our occupant JID, then the room is out")
    func leave() throws {
        var machine = try Self.joined()
        let leaving = machine.leave()
        let presence = try #require(leaving)
        #expect(presence[attribute: "type"] == "unavailable")
        #expect(presence[attribute: "to"] == "\(Self.room)/bridge")
        #expect(!machine.isJoined)
    }
}
