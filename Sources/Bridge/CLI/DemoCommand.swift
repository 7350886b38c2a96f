import ArgumentParser
import EmbeddedProsody
import Foundation
import XMPP

/// `xmpp-bridge demo`: the whole path on a throwaway Prosody on loopback, no account needed.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start a throwaway Prosody on 127.0.0.1, log two accounts in and pass a message between them."
    )

    @Option(help: "The message alice sends to bob.")
    var message = "Hello from xmpp-bridge <&> 😀 中文"

    @OptionGroup var log: LogOptions

    func run() async throws {
        let logger = try self.log.makeLogger("xmpp-bridge.demo")
        let missing = ProsodyServer.missingPrerequisites()
        guard missing.isEmpty else {
            Self.say("xmpp-bridge demo needs \(missing.joined(separator: ", ")): apt-get install prosody openssl")
            throw ExitStatus.configuration.exitCode
        }
        let server = try ProsodyServer.start(accounts: [("alice", "alice-demo-pw"), ("bob", "bob-demo-pw")])
        defer { server.shutdown() }
        Self.say("Prosody started on 127.0.0.1 (STARTTLS port \(server.c2sPort), Direct TLS port \(server.directTLSPort)) in \(server.directory)")

        let client = XMPPClient(logger: logger)
        func configuration(_ user: String, _ mode: TLSMode) throws -> XMPPClientConfiguration {
            XMPPClientConfiguration(
                jid: try JID(localpart: user, domainpart: server.options.domain, resourcepart: "demo"),
                tlsMode: mode,
                tls: TLSConfiguration(additionalTrustRootsFile: server.certificate?.certificateFile),
                host: "127.0.0.1",
                port: mode == .directTLS ? server.directTLSPort : server.c2sPort
            )
        }
        let aliceConfiguration = try configuration("alice", .startTLS)
        let bobConfiguration = try configuration("bob", .directTLS)
        do throws(XMPPClientError) {
            let alice = try await client.connect(configuration: aliceConfiguration, password: "alice-demo-pw")
            Self.say("alice: \(Self.describe(alice))")
            let bob = try await client.connect(configuration: bobConfiguration, password: "bob-demo-pw")
            Self.say("bob:   \(Self.describe(bob))")

            var body = XMLElement(name: "body", namespace: XMPPNamespace.client)
            body.append(text: self.message)
            let stanza = XMLElement(
                name: "message", namespace: XMPPNamespace.client,
                attributes: [XMLAttribute(name: "to", value: bob.jid.description), XMLAttribute(name: "type", value: "chat")],
                children: [.element(body)]
            )
            Self.say("alice → bob: \(self.message)")
            try? await alice.send(stanza)
            for await element in bob.elements where element.name == "message" {
                Self.say("bob received from \(element[attribute: "from"] ?? "?"): \(element.firstChild(named: "body")?.text ?? "")")
                break
            }
            await alice.close()
            await bob.close()
            Self.say("Both sessions closed; stopping Prosody.")
        } catch {
            Self.say("demo failed: \(error)")
            Self.say(server.logTail())
            throw ExitStatus(error).exitCode
        }
    }

    /// Writes a line straight to standard output, so each step shows as it happens even through a pipe.
    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    private static func describe(_ connection: XMPPConnection) -> String {
        let tls = connection.target.tlsMode == .directTLS ? "Direct TLS" : "STARTTLS"
        return "logged in over \(tls) with \(connection.mechanism?.rawValue ?? "?"), bound as \(connection.jid)"
    }
}
