import Bridge
import ArgumentParser
import Foundation
import LocalTransport
import Logging
import ThrowawayProsody
import TransportCore
import XMPP

/// `xmpp-bridge demo`: the whole relay path on a throwaway Prosody on loopback, no
/// account needed. The bridge runs with a generated configuration whose channel joins
/// standard input, account A's contact (alice) and account B's contact (bob).
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the bridge against a throwaway Prosody on 127.0.0.1: stdin ↔ alice (account A) ↔ bob (account B)."
    )

    @Option(help: "The first line sent from standard input (more can be typed when standard input is a terminal).")
    var message = "Hello from xmpp-bridge <&> 😀 中文"

    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = try self.log.makeLogger("xmpp-bridge.demo")
        let missing = ProsodyServer.missingPrerequisites()
        guard missing.isEmpty else {
            CommandLineOutput.error("demo needs \(missing.joined(separator: ", ")): apt-get install prosody openssl")
            throw ExitStatus.configuration.exitCode
        }
        // Piped input (`echo hi | scripts/demo.sh`) is read here, before the bridge starts,
        // and relayed line by line after the scripted one, each narrated in turn; the stdio
        // transport then reads an empty standard input and only writes.
        let interactive = isatty(0) == 1
        var piped: [String] = []
        if !interactive {
            let input = FileHandle.standardInput.readDataToEndOfFile()
            piped = String(decoding: input, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
            let empty = open("/dev/null", O_RDONLY)
            if empty >= 0 {
                dup2(empty, 0)
                close(empty)
            }
        }
        let users = ["bridge-a", "bridge-b", "alice", "bob"]
        let server = try ProsodyServer.start(accounts: users.map { ($0, "\($0)-demo-pw") })
        defer { server.shutdown() }
        say("Prosody started (pid \(server.pid.map(String.init) ?? "?")) on 127.0.0.1:\(server.c2sPort) (STARTTLS) in \(server.directory); stopped and removed when the demo ends")
        let file = try Self.writeConfiguration(for: server, interactive: interactive)
        say("Bridge configuration: \(file)")
        say("Channel 'demo' joins: stdin ↔ alice@example.test (via account A) ↔ bob@example.test (via account B)\n")

        var loader = ConfigurationLoader(file: file)
        let configuration = try loader.loadBridge()
        let process = try await BridgeProcess.make(configuration: configuration, logger: logger)
        let bridge = Task { try await process.run() }

        let alice = try await Self.person("alice", server: server, logger: logger)
        let bob = try await Self.person("bob", server: server, logger: logger)

        for (index, line) in ([self.message] + piped).enumerated() {
            say("you (stdin) → \(line)")
            _ = await process.pipeline.handle(
                .message(InboundMessage(source: Endpoint(transport: "stdin"), sender: "you", nick: "you", id: "demo-\(index + 1)", body: line)),
                from: "stdin"
            )
            let relayed = "[demo] you: \(line)"
            say("bob's client received: \(await Self.receive(bob.events, body: relayed) ?? "(nothing within 10 s)")")
            say("alice's client received: \(await Self.receive(alice.events, body: relayed) ?? "(nothing within 10 s)")")
        }

        let reply = "Got it, thanks! 👍"
        say("bob replies → \(reply)   (it should come back on stdout below, and reach alice)")
        try await bob.session.send(Message(type: .chat, to: try JID("bridge-b@example.test"), body: reply))
        say("alice's client received: \(await Self.receive(alice.events, body: "[demo] bob: \(reply)") ?? "(nothing within 10 s)")")
        // Everything committed; give the stdout line a moment to be written before more narration.
        await process.pipeline.barrier()
        try await Task.sleep(for: .milliseconds(300))

        if interactive {
            // The stdio transport reads the terminal; Ctrl-D ends input and the bridge stops.
            say("\nType lines to relay them to alice and bob (Ctrl-D to finish).")
            _ = try? await bridge.value
        }
        say("\nStopping the bridge and Prosody.")
        await alice.session.stop()
        await bob.session.stop()
        await process.group.triggerGracefulShutdown()
        _ = try? await bridge.value
    }

    struct Person {
        let session: XMPPSession<ContinuousClock>
        let events: AsyncStream<Message>
    }

    /// A contact's own client, printing nothing itself; its messages come out of `events`.
    static func person(_ user: String, server: ProsodyServer, logger: Logger) async throws -> Person {
        let session = XMPPSession(
            configuration: .init(
                client: XMPPClientConfiguration(
                    jid: try JID(localpart: user, domainpart: server.options.domain, resourcepart: "phone"),
                    tls: TLSConfiguration(additionalTrustRootsFile: server.certificate?.certificateFile),
                    host: "127.0.0.1", port: server.c2sPort
                ),
                session: .init(softwareName: "\(BridgeIdentity.name) demo contact", softwareVersion: BridgeIdentity.version, capabilitiesNode: BridgeIdentity.node),
                reconnects: false
            ),
            password: "\(user)-demo-pw", client: XMPPClient(logger: logger), clock: ContinuousClock(),
            ids: StanzaIDGenerator(prefix: user), logger: logger
        )
        let (messages, sink) = AsyncStream.makeStream(of: Message.self)
        let (online, onlineSink) = AsyncStream.makeStream(of: Void.self)
        Task {
            for await event in session.events {
                if case .online = event {
                    onlineSink.yield()
                } else if case .message(let message, nil) = event, message.body != nil {
                    sink.yield(message)
                }
            }
            sink.finish()
        }
        Task { await session.run() }
        var iterator = online.makeAsyncIterator()
        _ = await iterator.next()
        return Person(session: session, events: messages)
    }

    /// The body of the first message on `stream` whose body is `body` (others before it are
    /// skipped), or nil after `timeout`.
    static func receive(_ stream: AsyncStream<Message>, body: String, timeout: Duration = .seconds(10)) async -> String? {
        await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await message in stream where message.body == body { return message.body }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    static func writeConfiguration(for server: ProsodyServer, interactive: Bool) throws -> String {
        let directory = server.directory
        for account in ["a", "b"] {
            let path = "\(directory)/\(account).password"
            try "bridge-\(account)-demo-pw\n".write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o600)
        }
        let ca = server.certificate?.certificateFile ?? ""
        let text = """
            # Generated by `xmpp-bridge demo`.
            [bridge]
            state = "demo.sqlite"
            control_socket = "demo.control"

            \(["a", "b"].map { account in
                """
                [accounts.\(account)]
                jid = "bridge-\(account)@example.test"
                password_file = "\(account).password"
                host = "127.0.0.1"
                port = \(server.c2sPort)
                ca_file = "\(ca)"

                """
            }.joined(separator: "\n"))
            [local.stdin]
            kind = "stdio"
            nick = "you"
            exit_on_eof = \(interactive)

            [channels.demo]
            format = "[{channel}] {nick}: {body}"
            members = [
              { local = "stdin", direction = "inout" },
              { account = "a", jid = "alice@example.test", direction = "inout" },
              { account = "b", jid = "bob@example.test", direction = "inout" },
            ]

            """
        let file = "\(directory)/bridge.toml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}

private func say(_ line: String) {
    StandardOutput().write(line + "\n")
}
