import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

/// One cell of the fault matrix (issue 39): a path users run, a server, a fault in the
/// middle of a burst. The burst crosses the bridge, the fault hits, and what each receiver
/// got is counted: lost, twice, seconds until the bridge was online again and until the
/// last message arrived. Receivers catch up from their own archives after a server crash,
/// as phones do, so "lost" means lost for good and a copy they fetch again is not "twice".
struct FaultScene {
    /// The paths users run.
    enum Path: String, CaseIterable, Sendable, CustomStringConvertible {
        /// FIFO → `b` → bob.
        case fifo
        /// alice ↔ `a` ↔ bridge ↔ `b` ↔ bob, a burst each way at once.
        case link
        /// Room ra (alice) ↔ `a` ↔ bridge ↔ `b` ↔ room rb (bob), a burst each way at once.
        case rooms

        var description: String { self.rawValue }
        var accounts: [String] { self == .fifo ? ["b"] : ["a", "b"] }
        /// Messages per direction.
        var burst: Int { self == .rooms ? 300 : 1_000 }
    }

    /// What one run counted.
    struct Outcome: CustomStringConvertible {
        /// Lost by the bridge: what the server had taken for it and it never passed on.
        var lost: [String]
        /// Lost by the server: what it acknowledged to a sender and then lost itself (never
        /// in the archive of the one it was for), or lost after the bridge handed it over
        /// (in the sending account's archive, not in the receiver's).
        var lostByServer: [String]
        var twice: [String]
        var online: Duration?
        var last: Duration?
        /// In-doubt messages the bridge sent again although archived (its log's `uncertain=N`).
        var uncertain: Int
        /// In-doubt messages the bridge sent again (its log's `sent again=N`).
        var sentAgain: Int
        /// How many messages the receivers had when the fault hit, of how many.
        var atFault: (received: Int, of: Int)
        var sessionLog: [String]

        var description: String {
            let seconds = { (duration: Duration?) in duration.map { String(format: "%.2f", Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) } ?? "never" }
            return "lost=\(self.lost.count) server-lost=\(self.lostByServer.count) twice=\(self.twice.count) online=\(seconds(self.online)) last=\(seconds(self.last)) uncertain=\(self.uncertain) sent-again=\(self.sentAgain) at-fault=\(self.atFault.received)/\(self.atFault.of)"
                + (self.twice.isEmpty ? "" : " first-twice=\(self.twice.prefix(3))") + (self.lost.isEmpty ? "" : " first-lost=\(self.lost.prefix(3))")
                + (self.lostByServer.isEmpty ? "" : " first-server-lost=\(self.lostByServer.prefix(3))")
        }
    }

    let path: Path
    let server: any TestXMPPServer
    let label: String

    /// Runs the burst, injects `fault` mid-way, counts, and prints one `[fault-matrix]` line
    /// (what `Benchmarks/faults/table.sh` reads).
    func run(_ fault: ServerFault) async throws -> Outcome {
        let domain = self.server.domain
        let rooms = self.path == .rooms ? [try JID("ra@\(self.server.mucDomain)"), try JID("rb@\(self.server.mucDomain)")] : []
        let alice = try await TestSession.start(
            "alice", on: self.server, rooms: rooms.isEmpty ? [] : [RoomConfiguration(jid: rooms[0], nick: "alice")], catchUp: .init())
        let bob = try await TestSession.start(
            "bob", on: self.server, rooms: rooms.isEmpty ? [] : [RoomConfiguration(jid: rooms[1], nick: "bob")], catchUp: .init())
        let config = try BridgeConfigFile.write(
            accounts: self.path.accounts.map { ($0, $0, self.server) }, in: self.server.directory, rest: self.channel(rooms: rooms)
        )
        let bridge = try BridgeDaemon.start(config: config, in: self.server.directory)
        defer { bridge.terminate() }
        try await bridge.waitOnline(self.path.accounts)
        if !rooms.isEmpty {
            for room in rooms {
                guard await bridge.waitForLog({ $0.contains("joined room") && $0.contains("room=\(room)") }) else { throw TestFailure("bridge did not join \(room)") }
            }
        }
        // Each receiver's expected bodies, as they arrive.
        let n = self.path.burst
        var expected: [(session: TestSession, bodies: [String])] = []
        var writer: ChildProcess?
        let toBob = (1...n).map { String(format: "a→b %04d", $0) }
        let toAlice = (1...n).map { String(format: "b→a %04d", $0) }
        let fifo = "\(self.server.directory)/alerts.fifo"
        switch self.path {
        case .fifo:
            expected = [(bob, toBob)]
            writer = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", "for i in $(seq -w 1 \(n)); do echo \"a→b $i\"; done > '\(fifo)'"],
                stdin: "/dev/null", stdout: "\(self.server.directory)/writer.log", stderr: "\(self.server.directory)/writer.log"
            )
        case .link, .rooms:
            let prefix = self.path == .rooms
            expected = [(bob, toBob.map { prefix ? "alice: \($0)" : $0 }), (alice, toAlice.map { prefix ? "bob: \($0)" : $0 })]
            let targets = rooms.isEmpty ? [try JID("a@\(domain)"), try JID("b@\(domain)")] : rooms
            // Both bursts in full, taken by the server (acknowledged), before the fault:
            // what a sender sends again after a crash is new to the bridge.
            let (aliceSession, bobSession, groupchat) = (alice.session, bob.session, !rooms.isEmpty)
            async let fromAlice: Void = Self.burst(toBob, from: aliceSession, to: targets[0], groupchat: groupchat)
            async let fromBob: Void = Self.burst(toAlice, from: bobSession, to: targets[1], groupchat: groupchat)
            _ = try await (fromAlice, fromBob)
        }
        let total = expected.reduce(0) { $0 + $1.bodies.count }
        let receivedCount = { () async -> Int in
            var count = 0
            for (session, bodies) in expected { count += Set(await Received.bodies(session.log)).intersection(bodies).count }
            return count
        }
        _ = await eventually(timeout: .seconds(30)) { await receivedCount() >= total / 10 }
        let atFault = await receivedCount()
        let online = { (account: String) in bridge.logLines.filter { $0.contains("transport=\(account)") && $0.hasSuffix("] online") }.count }
        let onlineBefore = self.path.accounts.map(online)
        let faultAt = ContinuousClock.now
        do {
            try await fault.inject(on: self.server, accounts: self.path.accounts, bridgePID: bridge.run.process.pid)
        } catch {
            throw TestFailure("\(error)\nbridge log:\n\(bridge.run.errors.suffix(6000))")
        }
        let cameBack = await eventually(timeout: .seconds(60)) { zip(self.path.accounts, onlineBefore).allSatisfy { online($0) > $1 } }
        guard cameBack else {
            throw TestFailure("the bridge was not online again within 60 s of the fault; bridge log:\n\(bridge.run.errors.suffix(6000))\nserver log:\n\(self.server.logTail(lines: 40))")
        }
        let onlineAfter = faultAt.duration(to: .now)
        // When the last message arrived; what the server lost itself never will.
        var (seen, lastArrival) = (atFault, faultAt)
        let complete = await eventually(timeout: .seconds(60)) {
            let count = await receivedCount()
            if count > seen { (seen, lastArrival) = (count, .now) }
            return count >= total
        }

        #expect(writer?.wait(timeout: 30) ?? true)
        // Nothing else arrives: a marker sent after the burst is the last thing each gets.
        switch self.path {
        case .fifo:
            let marker = try ChildProcess(
                executable: "/bin/sh", arguments: ["-c", "echo marker > '\(fifo)'"],
                stdin: "/dev/null", stdout: "\(self.server.directory)/marker.log", stderr: "\(self.server.directory)/marker.log"
            )
            _ = marker.wait(timeout: 30)
        case .link, .rooms:
            let targets = rooms.isEmpty ? [try JID("a@\(domain)"), try JID("b@\(domain)")] : rooms
            // A receiver's own connection may be going through a reconnect of its own (its
            // ack_timeout under load): the marker is tried again until it is taken (a second
            // marker changes nothing).
            for (sender, target) in [(alice, targets[0]), (bob, targets[1])] {
                let taken = await eventually(timeout: .seconds(30), every: .milliseconds(500)) {
                    (try? await Self.burst(["marker"], from: sender.session, to: target, groupchat: !rooms.isEmpty)) != nil
                }
                guard taken else { throw TestFailure("\(sender.jid) could not send its marker") }
            }
        }
        var lost: [String] = []
        var lostByServer: [String] = []
        var twice: [String] = []
        for (session, bodies) in expected {
            let marker = self.path == .rooms ? (session.jid.localpart == "bob" ? "alice: marker" : "bob: marker") : "marker"
            guard await Received.message(session.log, body: marker, timeout: .seconds(60)) != nil else {
                throw TestFailure("\(session.jid) never got the marker; bridge log:\n\(bridge.run.errors.suffix(4000))")
            }
            // A copy the receiver fetched from its archive has the archive id of the one it
            // got live; a second copy from the bridge has its own.
            var copies: [String: Set<String>] = [:]
            for message in await session.log.messages {
                guard let body = message.body, bodies.contains(body) else { continue }
                copies[body, default: []].insert(message.stanzaID?.rawValue ?? message.id ?? UUID().uuidString)
            }
            let missing = bodies.filter { copies[$0] == nil }
            if !missing.isEmpty, let own = try self.server.archivedBodies(of: self.path == .rooms ? "" : session.jid.localpart ?? "") {
                // In the receiver's own archive but never seen: its catch-up missed them.
                print("[fault-matrix] \(session.jid) missing \(missing.count), of which in its own archive \(missing.filter(own.contains).count): \(missing.prefix(5))")
            }
            let server = try self.lostByServer(missing, to: session.jid.localpart ?? "")
            lostByServer += server
            lost += missing.filter { !server.contains($0) }
            twice += bodies.filter { (copies[$0]?.count ?? 0) > 1 }
        }
        let sessionLog = bridge.logLines.filter {
            ["in-doubt", "resumption failed", "stream resumed", "resumed stream was not read", "no acknowledgement", "caught up", "before it reflected"].contains(where: $0.contains)
        }.map { $0.components(separatedBy: "xmpp-bridge: ").last ?? String($0) }
        let count = { (key: String) in
            sessionLog.filter { $0.contains("in-doubt messages checked") }.compactMap { line in
                line.range(of: key).flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
            }.reduce(0, +)
        }
        let uncertain = count("uncertain=")
        let sentAgain = count("sent again=")
        let last = complete || (lost.isEmpty && !lostByServer.isEmpty) ? faultAt.duration(to: lastArrival) : nil
        let outcome = Outcome(
            lost: lost, lostByServer: lostByServer, twice: twice, online: onlineAfter, last: last, uncertain: uncertain, sentAgain: sentAgain, atFault: (atFault, total), sessionLog: sessionLog
        )
        print("[fault-matrix] server=\(self.label) path=\(self.path) fault=\(fault.rawValue.replacingOccurrences(of: " ", with: "_")) \(outcome)")
        if !outcome.lost.isEmpty || !outcome.twice.isEmpty { print(sessionLog.joined(separator: "\n")) }
        #expect(bridge.stop() == 0, "stderr: \(bridge.run.errors.suffix(2000))")
        await alice.stop()
        await bob.stop()
        return outcome
    }

    /// Which of the bodies `receiver` never got the server lost itself, by its archives (where
    /// the tests can read them; elsewhere none): one the first hop never took (not in the
    /// archive of the bridge's account, or of the source room) was acknowledged to its
    /// sender and lost before it reached the bridge; one the last hop took from the bridge
    /// (in the sending account's archive, or the target room's) was lost after it.
    private func lostByServer(_ missing: [String], to receiver: String) throws -> [String] {
        guard !missing.isEmpty else { return [] }
        let (from, to) = receiver == "bob" ? ("a", "b") : ("b", "a")
        switch self.path {
        case .fifo:
            guard let sent = try self.server.archivedBodies(of: "b") else { return [] }
            return missing.filter { sent.contains($0) }
        case .link:
            guard let taken = try self.server.archivedBodies(of: from), let sent = try self.server.archivedBodies(of: to) else { return [] }
            return missing.filter { !taken.contains($0) || sent.contains($0) }
        case .rooms:
            let room = { (name: String) in "\(name)@\(self.server.mucDomain)" }
            let (source, target) = receiver == "bob" ? (room("ra"), room("rb")) : (room("rb"), room("ra"))
            guard let taken = try self.server.archivedBodies(of: source), let sent = try self.server.archivedBodies(of: target) else { return [] }
            // The bridge's format, "{nick}: {body}", names the source room's sender.
            let original = { (body: String) in String(body.drop { $0 != ":" }.dropFirst(2)) }
            return missing.filter { !taken.contains(original($0)) || sent.contains($0) }
        }
    }

    /// `bodies` from `session` to `target` in batches of 50, each with an id and origin-id,
    /// each batch acknowledged by the server before the next (ejabberd ends a client's
    /// stream that floods it).
    static func burst(_ bodies: [String], from session: XMPPSession<ContinuousClock>, to target: JID, groupchat: Bool) async throws {
        for start in stride(from: 0, to: bodies.count, by: 50) {
            var messages: [Message] = []
            for body in bodies[start..<min(start + 50, bodies.count)] {
                let id = await session.nextID()
                var message = Message(type: groupchat ? .groupchat : .chat, to: target, id: id, body: body)
                message.extensions.append(OriginID.element(id))
                messages.append(message)
            }
            try await session.send(messages)
            try await session.waitForAcknowledgement()
        }
    }

    private func channel(rooms: [JID]) -> String {
        let domain = self.server.domain
        switch self.path {
        case .fifo:
            return """
                [local.alerts]
                kind = "fifo"
                path = "alerts.fifo"

                [channels.alerts]
                format = "{body}"
                members = [
                  { local = "alerts", direction = "in" },
                  { account = "b", jid = "bob@\(domain)", direction = "out" },
                ]
                """
        case .link:
            return """
                [channels.link]
                format = "{body}"
                members = [
                  { account = "a", jid = "alice@\(domain)", direction = "inout" },
                  { account = "b", jid = "bob@\(domain)", direction = "inout" },
                ]
                """
        case .rooms:
            return """
                [channels.rooms]
                format = "{nick}: {body}"
                members = [
                  { account = "a", room = "\(rooms[0])", nick = "bridge" },
                  { account = "b", room = "\(rooms[1])", nick = "bridge" },
                ]
                """
        }
    }
}
