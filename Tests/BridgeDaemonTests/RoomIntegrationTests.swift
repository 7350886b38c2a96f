import Foundation
import IntegrationSupport
import TestServers
import Testing
import XMPP

#if canImport(Glibc)
import Glibc
#endif

/// Rooms as channel members (issue 10) with the real daemon and two real Prosody servers,
/// each with a MUC component and its archive (mod_muc_mam): relayed once, by nick, never
/// echoed; rejoined after a kick and a server restart; what the bridge missed caught up
/// from the room's archive, once; a taken nick suffixed without breaking echo safety.
@Suite("rooms against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(5)))
struct RoomIntegrationTests {
    /// Prosody for `domain` with rooms on `muc.DOMAIN`, the bridge account `relay` and `users`.
    static func server(_ domain: String, users: [String]) async throws -> ProsodyServer {
        var options = ProsodyServer.Options()
        options.domain = domain
        options.rooms = true
        return try await ProsodyServer.started(options, accounts: (["relay"] + users).map { ($0, "pw") })
    }

    static func room(_ name: String, on server: any TestXMPPServer, nick: String) throws -> RoomConfiguration {
        RoomConfiguration(jid: try JID("\(name)@\(server.mucDomain)"), nick: nick)
    }

    /// A bridge with account `a` (relay@a.test) and `b` (relay@b.test) and `rest`.
    static func bridge(_ a: ProsodyServer, _ b: ProsodyServer, rest: String) throws -> BridgeDaemon {
        let config = try BridgeConfigFile.write(accounts: [("a", "relay", a), ("b", "relay", b)], in: a.directory, rest: rest)
        return try BridgeDaemon.start(config: config, in: a.directory)
    }

    static func linked(_ roomA: String, _ roomB: String, channel: String = "rooms") -> String {
        """
        [channels.\(channel)]
        format = "{nick}: {body}"
        members = [
          { account = "a", room = "\(roomA)", nick = "bridge" },
          { account = "b", room = "\(roomB)", nick = "bridge" },
        ]
        """
    }

    /// How many times the bridge logged that it joined `room`.
    static func joins(_ bridge: BridgeDaemon, _ room: String) -> Int {
        bridge.logLines.filter { $0.contains("joined room") && $0.contains("room=\(room)") }.count
    }

    static func waitForJoins(_ bridge: BridgeDaemon, _ room: String, count: Int, timeout: Duration = .seconds(20)) async throws {
        guard await bridge.waitForLog(timeout: timeout, { _ in Self.joins(bridge, room) >= count }) else {
            throw TestFailure("the bridge did not join \(room) \(count)×; stderr:\n\(bridge.run.errors.suffix(4000))")
        }
    }

    /// Two servers, alice in dev@muc.a.test and bob in ops@muc.b.test (each made the room,
    /// so each owns it), plus any further users.
    struct Pair {
        let a: ProsodyServer
        let b: ProsodyServer
        let roomA: RoomConfiguration
        let roomB: RoomConfiguration
        let alice: TestSession
        let bob: TestSession

        static func start(usersA: [String] = [], usersB: [String] = []) async throws -> Pair {
            let a = try await RoomIntegrationTests.server("a.test", users: ["alice"] + usersA)
            let b = try await RoomIntegrationTests.server("b.test", users: ["bob"] + usersB)
            let roomA = try RoomIntegrationTests.room("dev", on: a, nick: "alice")
            let roomB = try RoomIntegrationTests.room("ops", on: b, nick: "bob")
            let alice = try await TestSession.start("alice", on: a, rooms: [roomA])
            let bob = try await TestSession.start("bob", on: b, rooms: [roomB])
            return Pair(a: a, b: b, roomA: roomA, roomB: roomB, alice: alice, bob: bob)
        }

        var linked: String { RoomIntegrationTests.linked("\(self.roomA.jid)", "\(self.roomB.jid)") }

        /// A bridge linking the two rooms (or with `rest`), once it has joined both.
        func startBridge(rest: String? = nil) async throws -> BridgeDaemon {
            let bridge = try RoomIntegrationTests.bridge(self.a, self.b, rest: rest ?? self.linked)
            try await RoomIntegrationTests.waitForJoins(bridge, "\(self.roomA.jid)", count: 1)
            try await RoomIntegrationTests.waitForJoins(bridge, "\(self.roomB.jid)", count: 1)
            return bridge
        }

        func stop() async {
            await self.alice.stop()
            await self.bob.stop()
        }

        func shutdown() {
            self.a.shutdown()
            self.b.shutdown()
        }
    }

    @Test("room on muc.a ↔ room on muc.b: once, with the sender's nick, exact text; nothing echoes back")
    func roomToRoom() async throws {
        let pair = try await Pair.start()
        defer { pair.shutdown() }
        let (roomA, roomB, alice, bob) = (pair.roomA, pair.roomB, pair.alice, pair.bob)
        let bridge = try await pair.startBridge()
        defer { bridge.terminate() }

        let text = "<&>\"' 😀 漢字 — done"
        try await alice.say(text, in: roomA.jid)
        let relayed = await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: \(text)" }
        #expect(relayed?.from?.resourcepart == "bridge", "stderr: \(bridge.run.errors.suffix(3000))")
        try await bob.say("reply", in: roomB.jid)
        #expect(await alice.waitForRoomMessage(roomA.jid) { $0 == "bob: reply" } != nil)
        // Markers, sent after the messages under test, have crossed both ways: an echo
        // would have come before them.
        try await alice.say("marker a", in: roomA.jid)
        try await bob.say("marker b", in: roomB.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: marker a" } != nil)
        #expect(await alice.waitForRoomMessage(roomA.jid) { $0 == "bob: marker b" } != nil)
        let inA = await alice.roomMessages(roomA.jid)
        let inB = await bob.roomMessages(roomB.jid)
        #expect(inB.filter { $0.body == "alice: \(text)" }.count == 1)
        #expect(inA.filter { $0.body == "bob: reply" }.count == 1)
        #expect(inA.filter { $0.body.contains(text) }.count == 1, "echoed into room a: \(inA)")
        #expect(inB.filter { $0.body.contains("reply") }.count == 1, "echoed into room b: \(inB)")
        #expect(inA.filter { $0.nick == "bridge" }.map(\.body) == ["bob: reply", "bob: marker b"])
        #expect(bridge.stop() == 0)
        await pair.stop()
    }

    @Test("a room, a 1:1 contact and a socket subscriber in one channel: each reaches the others; occupants reach the socket as events")
    func roomContactAndSocket() async throws {
        let a = try await Self.server("a.test", users: ["alice", "carol", "dave"])
        defer { a.shutdown() }
        let b = try await Self.server("b.test", users: [])
        defer { b.shutdown() }
        let roomA = try Self.room("dev", on: a, nick: "alice")
        let alice = try await TestSession.start("alice", on: a, rooms: [roomA])
        let carol = try await TestSession.start("carol", on: a)
        let bridge = try Self.bridge(
            a, b,
            rest: """
                [local.ops]
                kind = "socket"
                path = "ops.sock"

                [channels.mixed]
                format = "{nick}: {body}"
                occupant_events = true
                members = [
                  { account = "a", room = "\(roomA.jid)", nick = "bridge" },
                  { account = "a", jid = "carol@a.test" },
                  { local = "ops" },
                ]
                """
        )
        defer { bridge.terminate() }
        try await Self.waitForJoins(bridge, "\(roomA.jid)", count: 1)
        let path = "\(a.directory)/ops.sock"
        try await bridge.waitForSocket(path)
        let socket = try UnixLineClient(path: path)
        try socket.send(#"{"subscribe":["mixed"]}"#)
        _ = await socket.readObject()

        try await alice.say("from the room", in: roomA.jid)
        #expect(await Received.message(carol.log, body: "alice: from the room") != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        var line = await socket.readObject()
        #expect(line?["body"] as? String == "from the room")
        #expect(line?["from"] as? String == "alice")
        #expect(line?["source"] as? String == "a:\(roomA.jid)")

        try await carol.session.send(Message(type: .chat, to: try JID("relay@a.test"), body: "from carol"))
        #expect(await alice.waitForRoomMessage(roomA.jid) { $0 == "carol: from carol" } != nil)
        line = await socket.readObject()
        #expect(line?["body"] as? String == "from carol")

        try socket.send(#"{"channel":"mixed","body":"from the socket"}"#)
        #expect(await alice.waitForRoomMessage(roomA.jid) { $0.hasSuffix(": from the socket") } != nil)
        #expect(await Received.message(carol.log, body: "ops: from the socket") != nil)

        let dave = try await TestSession.start("dave", on: a, rooms: [try Self.room("dev", on: a, nick: "dave")])
        var event: [String: Any]?
        repeat { event = await socket.readObject() } while event != nil && event?["event"] as? String != "occupant"
        #expect(event?["nick"] as? String == "dave")
        #expect(event?["change"] as? String == "joined")
        #expect(event?["room"] as? String == "a:\(roomA.jid)")
        // occupant_events: the other members are told as text too.
        #expect(await Received.message(carol.log, body: "dave: entered the room") != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        socket.close()
        #expect(bridge.stop() == 0)
        await dave.stop()
        await alice.stop()
        await carol.stop()
    }

    @Test("kicked: out of the room, rejoined after room_rejoin_delay, what was said meanwhile caught up once and in order, relaying again; `rooms` shows the state")
    func kickedAndRejoined() async throws {
        let pair = try await Pair.start()
        defer { pair.shutdown() }
        let (a, roomA, roomB, alice, bob) = (pair.a, pair.roomA, pair.roomB, pair.alice, pair.bob)
        let bridge = try await pair.startBridge()
        defer { bridge.terminate() }
        let rooms = try MirrorSupport.command(["rooms", "--config", bridge.config], in: a.directory)
        #expect(rooms.output.contains("a:\(roomA.jid)  joined  nick bridge"), "\(rooms.output)\(rooms.errors)")

        // alice created the room, so she owns it and may kick (XEP-0045 §8.2).
        var item = XMLElement(name: "item", namespace: "http://jabber.org/protocol/muc#admin", attributes: [XMLAttribute(name: "nick", value: "bridge"), XMLAttribute(name: "role", value: "none")])
        var reason = XMLElement(name: "reason", namespace: "http://jabber.org/protocol/muc#admin")
        reason.append(text: "testing")
        item.append(reason)
        var query = XMLElement(name: "query", namespace: "http://jabber.org/protocol/muc#admin")
        query.append(item)
        _ = try await alice.session.request(IQ(type: .set, id: await alice.session.nextID(), to: roomA.jid, payload: query))
        // Said while the bridge is out of the room (it rejoins after room_rejoin_delay, 1 s):
        // caught up from the room's archive after the rejoin, in order, once.
        let missed = (1...3).map { "while out \($0)" }
        for text in missed { try await alice.say(text, in: roomA.jid) }
        #expect(await bridge.waitForLog { $0.contains("kicked from the room") && $0.contains("testing") })
        try await Self.waitForJoins(bridge, "\(roomA.jid)", count: 2)
        for text in missed {
            #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: \(text)" } != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        }
        try await alice.say("after the kick", in: roomA.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: after the kick" } != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        let relayed = await bob.roomMessages(roomB.jid).filter { $0.nick == "bridge" }.map(\.body)
        #expect(relayed == missed.map { "alice: \($0)" } + ["alice: after the kick"], "stderr: \(bridge.run.errors.suffix(3000))")
        #expect(bridge.stop() == 0)
        await pair.stop()
    }

    @Test("a room that refuses our message (moderated, the bridge without voice): a dead letter with the room's error, logged once")
    func noVoice() async throws {
        let pair = try await Pair.start()
        defer { pair.shutdown() }
        let (a, roomA, roomB, alice, bob) = (pair.a, pair.roomA, pair.roomB, pair.alice, pair.bob)
        let bridge = try await pair.startBridge()
        defer { bridge.terminate() }
        // alice owns dev: she makes it moderated (XEP-0045 §10.2) and takes the bridge's voice (§8.4).
        var form = XMLElement(name: "x", namespace: "jabber:x:data", attributes: [XMLAttribute(name: "type", value: "submit")])
        for (name, value) in [("FORM_TYPE", "http://jabber.org/protocol/muc#roomconfig"), ("muc#roomconfig_moderatedroom", "1")] {
            var field = XMLElement(name: "field", namespace: "jabber:x:data", attributes: [XMLAttribute(name: "var", value: name)])
            var text = XMLElement(name: "value", namespace: "jabber:x:data")
            text.append(text: value)
            field.append(text)
            form.append(field)
        }
        var configure = XMLElement(name: "query", namespace: "http://jabber.org/protocol/muc#owner")
        configure.append(form)
        _ = try await alice.session.request(IQ(type: .set, id: await alice.session.nextID(), to: roomA.jid, payload: configure))
        var admin = XMLElement(name: "query", namespace: "http://jabber.org/protocol/muc#admin")
        admin.append(XMLElement(name: "item", namespace: "http://jabber.org/protocol/muc#admin", attributes: [XMLAttribute(name: "nick", value: "bridge"), XMLAttribute(name: "role", value: "visitor")]))
        _ = try await alice.session.request(IQ(type: .set, id: await alice.session.nextID(), to: roomA.jid, payload: admin))

        try await bob.say("nobody may hear this", in: roomB.jid)
        #expect(await bridge.waitForLog { $0.contains("delivery moved to dead letters") }, "stderr: \(bridge.run.errors.suffix(3000))")
        let list = try MirrorSupport.command(["queue", "list", "--json", "--config", bridge.config], in: a.directory)
        let entries = try JSONDecoder().decode([ControlEntry].self, from: Data(list.output.utf8))
        let dead = entries.filter { $0.state == "dead" }
        #expect(dead.count == 1, "\(list.output)")
        #expect(dead.first?.target == "a:\(roomA.jid)")
        #expect(dead.first?.reason?.contains("forbidden") == true, "\(dead)")
        // The room still relays the other way, and the refusal was logged once.
        try await alice.say("still heard", in: roomA.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: still heard" } != nil)
        #expect(bridge.logLines.filter { $0.contains("delivery moved to dead letters") }.count == 1)
        #expect(await alice.roomMessages(roomA.jid).allSatisfy { !$0.body.contains("nobody may hear this") })
        #expect(bridge.stop() == 0)
        await pair.stop()
    }

    /// One entry of `xmpp-bridge queue list --json`.
    struct ControlEntry: Decodable {
        var state: String
        var target: String
        var reason: String?
    }

    @Test("nick taken: the bridge joins as bridge_, relays, and a stranger using the nick 'bridge' is relayed, never taken for an echo")
    func nickTaken() async throws {
        let pair = try await Pair.start(usersB: ["mallory"])
        defer { pair.shutdown() }
        let (b, roomA, roomB, alice, bob) = (pair.b, pair.roomA, pair.roomB, pair.alice, pair.bob)
        let mallory = try await TestSession.start("mallory", on: b, rooms: [try Self.room("ops", on: b, nick: "bridge")])
        let bridge = try await pair.startBridge()
        defer { bridge.terminate() }
        #expect(bridge.logLines.contains { $0.contains("joined room") && $0.contains("room=\(roomB.jid)") && $0.contains("nick=bridge_") })

        try await alice.say("hello b", in: roomA.jid)
        let relayed = await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: hello b" }
        #expect(relayed?.from?.resourcepart == "bridge_")
        try await mallory.say("mallory here", in: roomB.jid)
        #expect(await alice.waitForRoomMessage(roomA.jid) { $0 == "bridge: mallory here" } != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        try await alice.say("marker", in: roomA.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: marker" } != nil)
        #expect(await bob.roomMessages(roomB.jid).filter { $0.body.contains("hello b") }.count == 1)
        #expect(await alice.roomMessages(roomA.jid).filter { $0.body.contains("hello b") }.count == 1)
        #expect(await alice.roomMessages(roomA.jid).filter { $0.body.contains("mallory here") }.count == 1)
        #expect(bridge.stop() == 0)
        await pair.stop()
        await mallory.stop()
    }

    @Test("Prosody restarted: the room is rejoined and relays within 10 s; what was said while the bridge was down is caught up from the room's archive, once")
    func restartsAndCatchUp() async throws {
        let pair = try await Pair.start()
        defer { pair.shutdown() }
        let (a, b, roomA, roomB, alice, bob) = (pair.a, pair.b, pair.roomA, pair.roomB, pair.alice, pair.bob)
        let rest = Self.linked("\(roomA.jid)", "\(roomB.jid)")
        var bridge = try Self.bridge(a, b, rest: rest)
        defer { bridge.terminate() }
        try await Self.waitForJoins(bridge, "\(roomA.jid)", count: 1)
        try await Self.waitForJoins(bridge, "\(roomB.jid)", count: 1)
        try await alice.say("before", in: roomA.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: before" } != nil)

        // The server restarts under the running bridge.
        let seen = await alice.log.events.count
        try a.restart()
        let restarted = ContinuousClock.now
        try await Self.waitForJoins(bridge, "\(roomA.jid)", count: 2)
        #expect(ContinuousClock.now - restarted < .seconds(10), "rejoined after \(ContinuousClock.now - restarted)")
        #expect(await alice.waitForRoom(roomA.jid, state: .joined, after: seen) != nil)
        try await alice.say("after the restart", in: roomA.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: after the restart" } != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        #expect(ContinuousClock.now - restarted < .seconds(10), "relaying again after \(ContinuousClock.now - restarted)")

        // The bridge is down while alice talks; the next one catches up from the archive.
        #expect(bridge.stop() == 0)
        let missed = (1...5).map { "missed \($0)" }
        for text in missed { try await alice.say(text, in: roomA.jid) }
        _ = await alice.waitForRoomMessage(roomA.jid) { $0 == "missed 5" }
        bridge = try Self.bridge(a, b, rest: rest)
        try await Self.waitForJoins(bridge, "\(roomA.jid)", count: 1)
        for text in missed {
            #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: \(text)" } != nil, "stderr: \(bridge.run.errors.suffix(3000))")
        }
        // And once more: a restart of the bridge relays none of it again.
        #expect(bridge.stop() == 0)
        bridge = try Self.bridge(a, b, rest: rest)
        try await Self.waitForJoins(bridge, "\(roomA.jid)", count: 1)
        try await Self.waitForJoins(bridge, "\(roomB.jid)", count: 1)
        try await alice.say("marker", in: roomA.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "alice: marker" } != nil)
        let inB = await bob.roomMessages(roomB.jid).filter { $0.nick == "bridge" }.map(\.body)
        #expect(inB == ["alice: before", "alice: after the restart"] + missed.map { "alice: \($0)" } + ["alice: marker"], "stderr: \(bridge.run.errors.suffix(3000))")
        #expect(bridge.stop() == 0)
        await pair.stop()
    }

    @Test("10 linked pairs of rooms (20 rooms) with 5 occupants each: every message arrives exactly once, in the right room")
    func manyRooms() async throws {
        let pairs = 10
        let people = 5
        let a = try await Self.server("a.test", users: (1...people).map { "a\($0)" })
        defer { a.shutdown() }
        let b = try await Self.server("b.test", users: (1...people).map { "b\($0)" })
        defer { b.shutdown() }
        let roomsA = try (1...pairs).map { try JID("r\($0)@\(a.mucDomain)") }
        let roomsB = try (1...pairs).map { try JID("r\($0)@\(b.mucDomain)") }
        var sideA: [TestSession] = []
        var sideB: [TestSession] = []
        for index in 1...people {
            sideA.append(try await TestSession.start("a\(index)", on: a, rooms: roomsA.map { RoomConfiguration(jid: $0, nick: "a\(index)") }))
            sideB.append(try await TestSession.start("b\(index)", on: b, rooms: roomsB.map { RoomConfiguration(jid: $0, nick: "b\(index)") }))
        }
        let rest = (0..<pairs).map { Self.linked("\(roomsA[$0])", "\(roomsB[$0])", channel: "pair\($0 + 1)") }.joined(separator: "\n\n")
        let bridge = try Self.bridge(a, b, rest: rest)
        defer { bridge.terminate() }
        for room in roomsA + roomsB { try await Self.waitForJoins(bridge, "\(room)", count: 1) }

        for (index, session) in sideA.enumerated() {
            for (pair, room) in roomsA.enumerated() { try await session.say("a\(index + 1) in pair \(pair + 1)", in: room) }
        }
        for (index, session) in sideB.enumerated() {
            for (pair, room) in roomsB.enumerated() { try await session.say("b\(index + 1) in pair \(pair + 1)", in: room) }
        }
        // Each sender sees its own messages reflected: the rooms have taken them (and sent
        // them to the bridge) before any marker below.
        for (side, sessions, rooms) in [("a", sideA, roomsA), ("b", sideB, roomsB)] {
            for (index, session) in sessions.enumerated() {
                for (pair, room) in rooms.enumerated() {
                    let text = "\(side)\(index + 1) in pair \(pair + 1)"
                    #expect(await session.waitForRoomMessage(room, timeout: .seconds(60)) { $0 == text } != nil)
                }
            }
        }
        // Markers, one into every room after everything else: order holds per room, so once a
        // room's marker has reached every occupant of its linked room, so has all before it
        // (and any copy too many would have come first).
        for (pair, room) in roomsA.enumerated() { try await sideA[0].say("marker \(pair + 1)", in: room) }
        for (pair, room) in roomsB.enumerated() { try await sideB[0].say("marker \(pair + 1)", in: room) }
        for (receivers, rooms, from) in [(sideB, roomsB, "a1"), (sideA, roomsA, "b1")] {
            for session in receivers {
                for (pair, room) in rooms.enumerated() {
                    #expect(await session.waitForRoomMessage(room, timeout: .seconds(60)) { $0 == "\(from): marker \(pair + 1)" } != nil)
                }
            }
        }
        var lost = 0
        var duplicated = 0
        var misrouted = 0
        for (receivers, rooms, from) in [(sideB, roomsB, "a"), (sideA, roomsA, "b")] {
            for session in receivers {
                for (pair, room) in rooms.enumerated() {
                    let relayed = await session.roomMessages(room).filter { $0.nick == "bridge" && !$0.body.contains(": marker ") }.map(\.body)
                    let expected = (1...people).map { "\(from)\($0): \(from)\($0) in pair \(pair + 1)" }
                    lost += expected.filter { !relayed.contains($0) }.count
                    duplicated += relayed.count - Set(relayed).count
                    misrouted += relayed.filter { !expected.contains($0) }.count
                }
            }
        }
        print("20 rooms × 5 occupants: lost \(lost), duplicated \(duplicated), misrouted \(misrouted)")
        if lost + duplicated + misrouted > 0 {
            for (pair, room) in roomsB.enumerated() { print("pair \(pair + 1) at b1: \(await sideB[0].roomMessages(room).map(\.body))") }
        }
        #expect(lost == 0 && duplicated == 0 && misrouted == 0, "stderr: \(bridge.run.errors.suffix(3000))")
        #expect(bridge.stop() == 0)
        for session in sideA + sideB { await session.stop() }
    }

    @Test("route add --room joins a room at run time and SIGHUP leaves one and joins another, without the account going offline")
    func joinsAndLeavesWithoutReconnecting() async throws {
        let pair = try await Pair.start(usersA: ["carol"])
        defer { pair.shutdown() }
        let (a, roomA, roomB, alice, bob) = (pair.a, pair.roomA, pair.roomB, pair.alice, pair.bob)
        let extra = try Self.room("extra", on: a, nick: "carol")
        let carol = try await TestSession.start("carol", on: a, rooms: [extra])
        let bridge = try await pair.startBridge()
        defer { bridge.terminate() }

        let add = try MirrorSupport.command(["route", "add", "rooms", "a:\(extra.jid)", "--room", "--nick", "relay", "--config", bridge.config], in: a.directory)
        #expect(add.status == 0, "\(add.errors)")
        try await Self.waitForJoins(bridge, "\(extra.jid)", count: 1)
        try await carol.say("from the extra room", in: extra.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "carol: from the extra room" } != nil, "stderr: \(bridge.run.errors.suffix(3000))")

        // The file now links room b with the extra room only: dev is left, the rest stays.
        let seen = await alice.log.events.count
        let file = try String(contentsOfFile: bridge.config, encoding: .utf8).replacingOccurrences(of: "\(roomA.jid)", with: "\(extra.jid)")
        try file.write(toFile: bridge.config, atomically: true, encoding: .utf8)
        bridge.run.process.signal(SIGHUP)
        let left = await alice.log.waitFor(after: seen) {
            if case .occupant(_, let nick, let joined) = $0 { return nick == "bridge" && !joined }
            return false
        }
        #expect(left != nil, "the bridge did not leave dev; stderr: \(bridge.run.errors.suffix(3000))")
        try await bob.say("after the reload", in: roomB.jid)
        #expect(await carol.waitForRoomMessage(extra.jid) { $0 == "bob: after the reload" } != nil)
        try await alice.say("nobody hears this", in: roomA.jid)
        try await carol.say("marker", in: extra.jid)
        #expect(await bob.waitForRoomMessage(roomB.jid) { $0 == "carol: marker" } != nil)
        #expect(await bob.roomMessages(roomB.jid).allSatisfy { !$0.body.contains("nobody hears this") })
        #expect(!bridge.logLines.contains { $0.hasSuffix("] offline") }, "an account reconnected: \(bridge.run.errors.suffix(3000))")
        #expect(Self.joins(bridge, "\(extra.jid)") == 1)
        #expect(bridge.stop() == 0)
        await alice.stop()
        await carol.stop()
        await bob.stop()
    }
}
