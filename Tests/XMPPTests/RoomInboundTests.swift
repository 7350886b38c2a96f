import Testing
import TestSupport

@testable import XMPP

/// The session's reading of a room's stanzas (XEP-0045), without a session: what a
/// presence, an occupant's message, our reflection, a bounce and an archive result become.
@Suite("RoomInbound")
struct RoomInboundTests {
    typealias Inbound = RoomInbound<ManualClock.Instant>
    static let room = RoomStateMachineTests.room
    static let t0 = RoomStateMachineTests.t0

    /// The room's entry, joined (its machine past the subject), trusting stanza-ids.
    static func joinedEntry(catchUp: Bool = false) throws -> RoomTable<ManualClock.Instant>.Entry {
        var entry = RoomTable<ManualClock.Instant>.entry(
            for: RoomConfiguration(jid: try JID(room), nick: "bridge"),
            timings: RoomTimings(pingInterval: .seconds(300), pingTimeout: .seconds(30), rejoinAfterKick: .seconds(60), retryDelay: .seconds(5), maximumRetryDelay: .seconds(40)),
            catchUp: catchUp ? ArchiveCatchUpStateMachine.Configuration() : nil, cursor: nil
        )
        entry.machine = try RoomStateMachineTests.joined()
        return entry
    }

    static func read(_ xml: String, _ entry: inout RoomTable<ManualClock.Instant>.Entry) throws -> [Inbound.Action] {
        Inbound.read(try RoomStateMachineTests.stanza(xml), from: try JID(room), entry: &entry, now: t0)
    }

    @Test("a presence goes to the room's machine: our own with 110 while joining says joined")
    func presence() throws {
        var entry = try Self.joinedEntry()
        entry.machine = try RoomStateMachineTests.machine()
        _ = entry.machine.connected(now: Self.t0)
        let actions = try Self.read("<presence from='\(Self.room)/bridge'><x xmlns='\(RoomStateMachineTests.muc)'><item affiliation='none' role='participant'/><status code='110'/></x></presence>", &entry)
        #expect(actions == [.room([.joined(nick: "bridge")])])
        #expect(entry.machine.isJoined)
    }

    @Test("an occupant's message is emitted with the stanza-id the room gave it")
    func occupantMessage() throws {
        var entry = try Self.joinedEntry()
        let actions = try Self.read(
            "<message from='\(Self.room)/alice' type='groupchat' id='a1'><body>hi</body><stanza-id xmlns='urn:xmpp:sid:0' by='\(Self.room)' id='S1'/></message>", &entry
        )
        guard case .emit(let message) = actions.first, actions.count == 1 else {
            Issue.record("\(actions)")
            return
        }
        #expect(message.body == "hi")
        #expect(message.stanzaID == "S1")
    }

    @Test("our message comes back with our origin-id: settled, and its room stanza-id kept; from an untrusted room only settled")
    func reflection() throws {
        var entry = try Self.joinedEntry()
        entry.machine.sending(id: "r1")
        let xml = "<message from='\(Self.room)/bridge' type='groupchat' id='x'><body>hi</body><origin-id xmlns='urn:xmpp:sid:0' id='r1'/><stanza-id xmlns='urn:xmpp:sid:0' by='\(Self.room)' id='S2'/></message>"
        #expect(try Self.read(xml, &entry) == [.settled(id: "r1"), .copyStanzaID(id: "r1", stanzaID: "S2")])
        entry.trustsStanzaIDs = false
        entry.machine.sending(id: "r1")
        #expect(try Self.read(xml, &entry) == [.settled(id: "r1")])
    }

    @Test("an error bouncing our message settles it and goes to the owner; a refusal for now rejoins and asks to wait")
    func bounces() throws {
        var entry = try Self.joinedEntry()
        let bounce = try Self.read(
            "<message from='\(Self.room)' type='error' id='r2'><error type='cancel'><forbidden xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>", &entry
        )
        #expect(bounce.first == .settled(id: "r2"))
        guard case .emit(let message) = bounce.last, bounce.count == 2 else {
            Issue.record("\(bounce)")
            return
        }
        #expect(message.type == .error)
        let refused = try Self.read(
            "<message from='\(Self.room)' type='error' id='r3'><error type='cancel'><not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>", &entry
        )
        #expect(refused.first == .settled(id: "r3"))
        guard refused.count == 3, case .room(let rejoin) = refused[1], !rejoin.isEmpty, case .emit(let waiting) = refused[2] else {
            Issue.record("\(refused)")
            return
        }
        #expect(waiting.error?.type == .wait)
    }

    @Test("unreadable stanzas and archive results nobody asked for are ignored, with why")
    func ignored() throws {
        var entry = try Self.joinedEntry(catchUp: true)
        let forged = try Self.read(
            "<message from='\(Self.room)'><result xmlns='urn:xmpp:mam:2' queryid='q' id='1'/></message>", &entry
        )
        guard case .ignored(let reason) = forged.first, forged.count == 1 else {
            Issue.record("\(forged)")
            return
        }
        #expect(reason.contains("no query of ours"))
        let history = try Self.read("<message from='\(Self.room)/alice' type='chat' id='p1'><body>psst</body></message>", &entry)
        guard case .notEmitted = history.first, history.count == 1 else {
            Issue.record("\(history)")
            return
        }
    }
}
