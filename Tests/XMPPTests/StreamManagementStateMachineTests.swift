import Testing

@testable import XMPP

/// XEP-0198 counting, acknowledgement and resumption, without sockets (issue 9), including
/// the off-by-one and 2³² wrap cases other projects got wrong.
@Suite("StreamManagementStateMachine")
struct StreamManagementStateMachineTests {
    typealias Machine = StreamManagementStateMachine

    static func sm(_ name: String, _ attributes: [String: String] = [:], child: String? = nil) -> XMLElement {
        var element = XMLElement(name: name, namespace: Machine.namespace)
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) { element[attribute: key] = value }
        if let child { element.append(XMLElement(name: child, namespace: "urn:ietf:params:xml:ns:xmpp-stanzas")) }
        return element
    }

    static func message(_ n: Int) -> XMLElement {
        var element = XMLElement(name: "message", namespace: "jabber:client")
        element[attribute: "id"] = "m\(n)"
        return element
    }

    static func active(resumable: Bool = true) -> Machine {
        var machine = Machine()
        let enable = machine.enable(resume: resumable)
        #expect(enable.name == "enable" && enable[attribute: "resume"] == (resumable ? "true" : nil))
        let enabled = machine.received(Self.sm("enabled", resumable ? ["id": "sm-1", "resume": "true", "max": "600"] : [:]))
        #expect(enabled == [.enabled(id: resumable ? "sm-1" : nil, location: nil, maxSeconds: resumable ? 600 : nil)])
        return machine
    }

    @Test("not an SM element: nil; stanzas are not counted before <enabled/>")
    func notSM() {
        var machine = Machine()
        #expect(machine.received(Self.message(1)) == nil)
        #expect(machine.stanzaReceived() == nil)
        #expect(machine.stanzaSent(Self.message(1)) == nil)
    }

    @Test("outbound counting starts at <enable/>; <a h> releases exactly h stanzas")
    func outboundAcks() {
        var machine = Machine()
        _ = machine.enable(resume: true)
        #expect(machine.stanzaSent(Self.message(1)) == 1)  // sent before <enabled/> arrives: counted
        _ = machine.received(Self.sm("enabled", ["id": "x", "resume": "true"]))
        #expect(machine.stanzaSent(Self.message(2)) == 2)
        #expect(machine.stanzaSent(Self.message(3)) == 3)
        #expect(machine.received(Self.sm("a", ["h": "0"])) == [.acknowledged(through: 0, count: 0)])
        #expect(machine.received(Self.sm("a", ["h": "2"])) == [.acknowledged(through: 2, count: 2)])
        #expect(machine.pending.map { $0[attribute: "id"] } == ["m3"])
        #expect(machine.received(Self.sm("a", ["h": "3"])) == [.acknowledged(through: 3, count: 1)])
        #expect(machine.pending.isEmpty)
        // Acknowledging more than was sent is the server's error.
        #expect(machine.received(Self.sm("a", ["h": "4"])) == [.protocolError("handled-count-too-high")])
    }

    @Test("inbound h is the in-order watermark of handled stanzas; <r/> answers are coalesced")
    func inboundHandled() {
        var machine = Self.active()
        #expect(machine.takeAck() == nil)
        let first = machine.stanzaReceived()
        let second = machine.stanzaReceived()
        let third = machine.stanzaReceived()
        #expect([first, second, third] == [1, 2, 3])
        _ = machine.received(Self.sm("r"))
        _ = machine.received(Self.sm("r"))
        machine.handled(2)  // early: waits for 1
        #expect(machine.handled == 0)
        #expect(machine.takeAck()?[attribute: "h"] == "0")
        #expect(machine.takeAck() == nil, "two <r/> in one batch get one <a/>")
        machine.handled(1)
        #expect(machine.handled == 2)
        // The first answer fell short: the rest is reported without being asked.
        #expect(machine.takeAck()?[attribute: "h"] == "2")
        machine.handled(3)
        #expect(machine.takeAck()?[attribute: "h"] == "3")
        #expect(machine.takeAck() == nil)
        machine.handled(3)  // twice: ignored
        machine.handled(9)  // never received: ignored
        #expect(machine.handled == 3)
    }

    @Test("an answer deferred below a batch stays owed until enough is handled, or is taken without deferring")
    func deferredAnswer() {
        var machine = Self.active()
        for _ in 1...3 { _ = machine.stanzaReceived() }
        _ = machine.received(Self.sm("r"))
        machine.handled(1)
        #expect(machine.takeAck(deferringBelow: 2) == nil)
        #expect(machine.acknowledgementOwed)
        machine.handled(2)
        #expect(machine.takeAck(deferringBelow: 2)?[attribute: "h"] == "2")
        #expect(!machine.acknowledgementOwed)
        _ = machine.received(Self.sm("r"))
        machine.handled(3)
        #expect(machine.takeAck(deferringBelow: 2) == nil)
        // The owner's delay ended (or the stream closes): taken as it is.
        #expect(machine.takeAck()?[attribute: "h"] == "3")
        #expect(!machine.acknowledgementOwed)
        #expect(machine.takeAck() == nil)
    }

    @Test("counters wrap at 2³²")
    func wrap() {
        var machine = Machine()
        let previous = Machine.Resumption(
            id: "w", location: nil, handled: UInt32.max - 1, acknowledged: UInt32.max - 1, unacknowledged: [Self.message(1), Self.message(2)]
        )
        _ = machine.resume(previous)
        // The server counted one of the two (h = 2³² - 1): the other is resent.
        let resumed = machine.received(Self.sm("resumed", ["previd": "w", "h": String(UInt32.max)]))
        #expect(resumed == [.acknowledged(through: UInt32.max, count: 1), .resumed(resend: [Self.message(2)])])
        #expect(machine.stanzaSent(Self.message(2)) == 0)  // wrapped
        #expect(machine.stanzaSent(Self.message(3)) == 1)
        #expect(machine.received(Self.sm("a", ["h": "1"])) == [.acknowledged(through: 1, count: 2)])
        // Inbound: h continues from the stored value and wraps.
        #expect(machine.stanzaReceived() == UInt32.max)
        #expect(machine.stanzaReceived() == 0)
        machine.handled(UInt32.max)
        machine.handled(0)
        #expect(machine.handled == 0)
    }

    @Test("<resumed h> equal to what was sent resends nothing; h = 0 resends everything")
    func resumedOffByOne() {
        let stored = Machine.Resumption(id: "r", location: "host:5222", handled: 7, acknowledged: 10, unacknowledged: [Self.message(11), Self.message(12)])
        var all = Machine()
        let resume = all.resume(stored)
        #expect(resume[attribute: "previd"] == "r" && resume[attribute: "h"] == "7")
        #expect(all.received(Self.sm("resumed", ["previd": "r", "h": "12"])) == [.acknowledged(through: 12, count: 2), .resumed(resend: [])])
        var none = Machine()
        _ = none.resume(stored)
        #expect(none.received(Self.sm("resumed", ["previd": "r", "h": "10"])) == [.acknowledged(through: 10, count: 0), .resumed(resend: [Self.message(11), Self.message(12)])])
        #expect(none.resumption?.handled == 7)
        var tooHigh = Machine()
        _ = tooHigh.resume(stored)
        #expect(tooHigh.received(Self.sm("resumed", ["previd": "r", "h": "13"])) == [.protocolError("handled-count-too-high")])
    }

    @Test("<failed h> on resume releases what the server counted and hands back the rest for a fresh session")
    func resumeFailed() {
        var machine = Machine()
        _ = machine.resume(Machine.Resumption(id: "gone", location: nil, handled: 3, acknowledged: 5, unacknowledged: [Self.message(6), Self.message(7)]))
        let actions = machine.received(Self.sm("failed", ["h": "6"], child: "item-not-found"))
        #expect(actions == [.acknowledged(through: 6, count: 1), .resumeFailed(condition: "item-not-found", unacknowledged: [Self.message(7)])])
        #expect(machine.state == .inactive)
        #expect(machine.resumption == nil)
    }

    @Test("enable refused; enabled without resume is not resumable")
    func enableVariants() {
        var refused = Machine()
        _ = refused.enable(resume: true)
        #expect(refused.received(Self.sm("failed", [:], child: "unexpected-request")) == [.enableFailed(condition: "unexpected-request")])
        let plain = Self.active(resumable: false)
        #expect(plain.resumption == nil)
        let resumable = Self.active()
        #expect(resumable.resumption == Machine.Resumption(id: "sm-1", location: nil, handled: 0, acknowledged: 0, unacknowledged: []))
    }

    @Test("unexpected elements are protocol errors, never traps")
    func unexpected() {
        var machine = Machine()
        #expect(machine.received(Self.sm("enabled")) == [.protocolError("unexpected <enabled/>")])
        #expect(machine.received(Self.sm("resumed", ["h": "1"])) == [.protocolError("unexpected <resumed/>")])
        #expect(machine.received(Self.sm("a", ["h": "banana"])) == [])
        #expect(machine.received(Self.sm("r")) == [])
        var resuming = Machine()
        _ = resuming.resume(Machine.Resumption(id: "x", location: nil, handled: 0, acknowledged: 0, unacknowledged: []))
        #expect(resuming.received(Self.sm("resumed", ["previd": "x", "h": "-1"])) == [.protocolError("<resumed/> without a valid h")])
    }
}

extension StreamManagementStateMachineTests {
    @Test("an inherited session (another process's; its outbound positions unknown) resumes with its inbound count and takes the server's h as the outbound count, resending nothing; a failure releases nothing")
    func inheritedSession() throws {
        let stored = Machine.StoredSession(id: "sm-9", location: "10.0.0.1:5222", handled: 41, acknowledged: 7, unacknowledgedIDs: ["x", "y"])
        var machine = Machine(inheriting: stored)
        let resumption = try #require(machine.resumption)
        #expect(resumption.handled == 41 && resumption.acknowledged == 0 && resumption.unacknowledged.isEmpty)
        #expect(machine.resume(resumption)[attribute: "h"] == "41")
        #expect(machine.received(Self.sm("resumed", ["previd": "sm-9", "h": "1234"])) == [.resumed(resend: [])])
        #expect(machine.acknowledged == 1234 && machine.sent == 1234)
        #expect(machine.stanzaSent(Self.message(1)) == 1235, "numbering goes on from the server's count")
        #expect(machine.received(Self.sm("a", ["h": "1235"])) == [.acknowledged(through: 1235, count: 1)])

        var failing = Machine(inheriting: stored)
        _ = failing.resume(try #require(failing.resumption))
        #expect(failing.received(Self.sm("failed", ["h": "99"], child: "item-not-found")) == [.resumeFailed(condition: "item-not-found", unacknowledged: [])])
        #expect(failing.resumption == nil)
    }
}
