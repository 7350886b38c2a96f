import Testing
import TestSupport

@testable import XMPP

/// The session's login part (issue 40): it holds a place in the login queue only while
/// connecting, and a login cancelled in the queue neither connects nor keeps a place.
@Suite("SessionLogin", .timeLimit(.minutes(1)))
struct SessionLoginTests {
    static let configuration = XMPPClientConfiguration(jid: SessionScene.account)

    /// A login queued behind the test's own place in a queue of one.
    static func queued() async throws -> (gate: ConnectionGate, server: SessionTestServer, connecting: Task<Result<XMPPConnection, XMPPClientError>?, Never>) {
        let gate = ConnectionGate(limit: 1)
        let server = SessionTestServer(jid: SessionScene.account)
        let login = SessionLogin(connector: server, password: "pw", gate: gate, kept: nil)
        try await gate.acquire()
        let connecting = Task { await login.connect(Self.configuration, resume: nil) }
        #expect(await untilTrue { gate.usage.waiting == 1 }, "the login did not queue")
        return (gate, server, connecting)
    }

    @Test func aPlaceInTheQueueIsHeldOnlyWhileConnecting() async throws {
        let (gate, _, connecting) = try await Self.queued()
        gate.release()
        let connected = try #require(await connecting.value)
        #expect((try? connected.get()) != nil)
        #expect(gate.usage == (0, 0), "the place went back once connected")
    }

    @Test func aLoginCancelledInTheQueueDoesNotConnect() async throws {
        let (gate, server, connecting) = try await Self.queued()
        connecting.cancel()
        let outcome = await connecting.value
        #expect(outcome == nil)
        #expect(gate.usage == (1, 0), "only the test's own place is held")
        #expect(server.connectionCount == 0)
    }
}
