import Foundation
import IntegrationSupport
import NIOCore
import TestServers
import TestSupport
import Testing

@testable import XMPP

/// Stream resumption (XEP-0198 §5) where Prosody 0.12 cannot read the resumed stream
/// (issue 22): it feeds a resumed connection's input to the old connection's XML parser,
/// so when the old connection ended inside a stanza, everything sent afterwards becomes
/// part of that stanza. The acknowledgement watchdog finds it and starts a new session.
@Suite("resumption of a stream Prosody cannot read", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(2)))
struct ResumptionIntegrationTests {
    @Test("the old connection cut inside a stanza: the resumed stream answers nothing, the watchdog gives it up for a new session after ack_timeout, and messages flow again")
    func unreadResumedStreamIsGivenUp() async throws {
        let server = try await ProsodyServer.started(accounts: [("bob", "pw"), ("home", "pw")])
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        let recorder = LogRecorder()
        let home = try await TestSession.start(
            "home", on: server, resource: "bridge", reconnect: .init(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(500)),
            acknowledgementTimeout: .seconds(1), logger: recorder.logger("resumption-test")
        )
        let (session, log) = (home.session, home.log)
        let online = { await log.events.filter { if case .online = $0 { true } else { false } }.count }
        #expect(await online() == 1)
        try await session.sendAcknowledged([Message(type: .chat, to: bob.jid.bare, body: "before")])
        #expect(await bob.log.waitFor { if case .message(let message, nil) = $0 { message.body == "before" } else { false } } != nil)

        // Half a stanza reaches the server, then the connection is gone.
        let connection = try #require(await session.current.connection)
        let channel = connection.channel
        try await channel.eventLoop.submit {
            let context = try channel.pipeline.syncOperations.context(handlerType: XMPPClientChannelHandler.self)
            var bytes = channel.allocator.buffer(capacity: 64)
            bytes.writeString("<message to='bob@example.test' type='chat' id='cut'><body>cut off in the mid")
            context.writeAndFlush(NIOAny(bytes), promise: nil)
        }.get()
        await session.dropConnection()

        let givenUp = await eventually(timeout: .seconds(20)) {
            recorder.messages.contains("the resumed stream was not read (no acknowledgement in time); starting a new session")
        }
        #expect(givenUp, "log: \(recorder.messages.suffix(20))")
        #expect(recorder.messages.filter { $0 == "stream resumed" }.count == 1, "resumed once, never again: \(recorder.messages.suffix(20))")
        // Online as resumed, then online as a new session.
        #expect(await eventually { await online() >= 3 })
        try await session.sendAcknowledged([Message(type: .chat, to: bob.jid.bare, body: "after")])
        #expect(await bob.log.waitFor { if case .message(let message, nil) = $0 { message.body == "after" } else { false } } != nil)
        #expect(await bob.log.messages.compactMap(\.body) == ["before", "after"], "nothing of the cut stanza arrives")
        await home.stop()
        await bob.stop()
    }
}
