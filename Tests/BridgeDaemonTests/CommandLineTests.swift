import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import Testing
import XMPP

/// The `xmpp-bridge` binary against a real Prosody: send, listen, register, exit codes.
@Suite("xmpp-bridge commands against a real Prosody", .onTestBodyThreads, .serialized, .enabled(if: IntegrationEnvironment.enabled), .timeLimit(.minutes(3)))
struct CommandLineTests {
    /// The built binary sits next to the test bundle.
    static let binary: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var directory = bundle
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("xmpp-bridge").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return ".build/debug/xmpp-bridge"
    }()

    struct Run {
        let process: ChildProcess
        let stdout: String
        let stderr: String

        var output: String { (try? String(contentsOfFile: self.stdout, encoding: .utf8)) ?? "" }
        var errors: String { (try? String(contentsOfFile: self.stderr, encoding: .utf8)) ?? "" }

        /// Waits for the exit status (nil if it did not exit in time or was killed).
        func finish(timeout: TimeInterval = 30) -> Int32? {
            guard self.process.wait(timeout: timeout) else {
                self.process.terminate(timeout: 1)
                return nil
            }
            return self.process.exitCode
        }
    }

    static func start(_ arguments: [String], stdin: String = "/dev/null", in directory: String, environment: [String: String] = [:]) throws -> Run {
        let id = UUID().uuidString
        let out = "\(directory)/\(id).out"
        let err = "\(directory)/\(id).err"
        let process = try ChildProcess(executable: Self.binary, arguments: arguments, stdin: stdin, stdout: out, stderr: err, environment: environment)
        return Run(process: process, stdout: out, stderr: err)
    }

    static func accountArguments(_ user: String, on server: any TestXMPPServer, passwordFile: String) -> [String] {
        [
            "--jid", "\(user)@\(server.domain)", "--password-file", passwordFile,
            "--host", "127.0.0.1", "--port", "\(server.c2sPort)", "--ca-file", server.certificate?.certificateFile ?? "",
        ]
    }

    static func write(_ text: String, in directory: String, name: String) throws -> String {
        let path = "\(directory)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("send --lines delivers 1,000 lines in order, none lost, confirmed by exit 0")
    func sendThousandLines() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw"), ("bob", "pw")])
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        let password = try Self.write("pw\n", in: server.directory, name: "alice.pw")
        let lines = (1...1000).map { "line \($0) <&> 😀" }
        let input = try Self.write(lines.joined(separator: "\n") + "\n", in: server.directory, name: "lines.txt")
        let run = try Self.start(
            ["send", "--lines"] + Self.accountArguments("alice", on: server, passwordFile: password) + ["bob@example.test"],
            stdin: input, in: server.directory
        )
        #expect(run.finish() == 0, "stderr: \(run.errors)")
        let received = await bob.log.messages(atLeast: 1000)
        #expect(received.map { $0.body ?? "" } == lines)
        await bob.stop()
    }

    @Test("send --account takes the account from bridge.toml")
    func sendWithAccountFromConfig() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw"), ("bob", "pw")])
        defer { server.shutdown() }
        let bob = try await TestSession.start("bob", on: server)
        _ = try Self.write("pw\n", in: server.directory, name: "alice.pw")
        let config = try Self.write(
            """
            [accounts.alerts]
            jid = "alice@example.test"
            password_file = "alice.pw"
            host = "127.0.0.1"
            port = \(server.c2sPort)
            ca_file = "\(server.certificate?.certificateFile ?? "")"
            """,
            in: server.directory, name: "bridge.toml"
        )
        let run = try Self.start(
            ["send", "--account", "alerts", "--config", config, "--type", "headline", "-m", "backup ok", "bob@example.test"],
            in: server.directory
        )
        #expect(run.finish() == 0, "stderr: \(run.errors)")
        let received = await bob.log.messages(atLeast: 1)
        #expect(received.first?.body == "backup ok")
        #expect(received.first?.type == .headline)
        await bob.stop()
    }

    @Test("send with a wrong password exits with the authentication code (5)")
    func sendWrongPassword() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw")])
        defer { server.shutdown() }
        let password = try Self.write("not-the-password\n", in: server.directory, name: "wrong.pw")
        let run = try Self.start(
            ["send", "-m", "hi"] + Self.accountArguments("alice", on: server, passwordFile: password) + ["bob@example.test"],
            in: server.directory
        )
        #expect(run.finish() == 5)
        #expect(run.errors.contains("authentication failed for alice@example.test"))
        #expect(!run.errors.contains("not-the-password"))
    }

    @Test("--version prints the version and the commit the binary was built from")
    func version() throws {
        let run = try Self.start(["--version"], in: NSTemporaryDirectory())
        #expect(run.finish() == 0)
        let line = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        // "0.1.0 (commit 1a2b3c4)"; a build not told its commit says "unknown".
        #expect(line.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+ \(commit [0-9A-Za-z.-]+\)/) != nil, "\(line)")
    }

    @Test("send to an invalid JID exits with the invalid-recipient code (6) before connecting")
    func sendInvalidRecipient() throws {
        let run = try Self.start(
            ["send", "-m", "hi", "--jid", "alice@example.test", "--password-env", "UNUSED_PASSWORD", "--host", "127.0.0.1", "--port", "1", "bad jid@example.test"],
            in: NSTemporaryDirectory()
        )
        #expect(run.finish() == 6)
    }

    @Test("listen --json prints what a peer sent, one object per line, and stops on SIGTERM")
    func listenJSON() async throws {
        let server = try await ProsodyServer.started(accounts: [("alice", "pw"), ("bob", "pw")])
        defer { server.shutdown() }
        let password = try Self.write("pw\n", in: server.directory, name: "bob.pw")
        let run = try Self.start(
            ["listen", "--json", "--log-level", "info"] + Self.accountArguments("bob", on: server, passwordFile: password),
            in: server.directory
        )
        _ = await eventually(every: .milliseconds(50)) { run.errors.contains("session established") || !run.process.isRunning }
        #expect(run.errors.contains("session established"), "stderr: \(run.errors)")
        let alice = try await TestSession.start("alice", on: server)
        try await alice.session.send(Message(type: .chat, to: try JID("bob@example.test"), id: "m-1", body: "hello <&>\"' 😀 中文"))
        _ = await eventually(every: .milliseconds(50)) { run.output.contains("\n") }
        let line = try #require(run.output.split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["type"] == "chat")
        #expect(object["from"] == alice.jid.description)
        #expect(object["to"] == "bob@example.test")
        #expect(object["id"] == "m-1")
        #expect(object["body"] == "hello <&>\"' 😀 中文")
        #expect(object["timestamp"]?.hasSuffix("Z") == true)
        run.process.signal(SIGTERM)
        #expect(run.finish(timeout: 10) == 0)
        await alice.stop()
    }

    @Test("register creates an account where registration is enabled; a second try says it exists")
    func register() async throws {
        var options = ProsodyServer.Options()
        options.registration = true
        let server = try await ProsodyServer.started(options)
        defer { server.shutdown() }
        let password = try Self.write("pw\n", in: server.directory, name: "new.pw")
        let arguments = ["register"] + Self.accountArguments("newcomer", on: server, passwordFile: password)
        let first = try Self.start(arguments, in: server.directory)
        #expect(first.finish() == 0, "stderr: \(first.errors)")
        #expect(first.output.contains("registered newcomer@example.test"))
        let second = try Self.start(arguments, in: server.directory)
        #expect(second.finish() == 5)
        #expect(second.errors.contains("already exists"))
        let session = try await TestSession.start("newcomer", on: server)
        #expect(session.jid.bare.description == "newcomer@example.test")
        await session.stop()
    }

    @Test("register on a server without registration says so")
    func registerRefused() async throws {
        let server = try await ProsodyServer.started()
        defer { server.shutdown() }
        let password = try Self.write("pw\n", in: server.directory, name: "new.pw")
        let run = try Self.start(["register"] + Self.accountArguments("newcomer", on: server, passwordFile: password), in: server.directory)
        #expect(run.finish() == 5)
        #expect(run.errors.contains("does not allow in-band registration"))
    }
}

extension CommandLineTests {
    @Test("state migrate refuses bad input with exit 2 and a clear line: not a postgresql:// target, no SQLite file, two password sources; an unreachable database likewise")
    func stateMigrateBadInput() throws {
        let folder = try TemporaryFolder()
        let directory = folder.url.path
        let state = try Self.write("", in: directory, name: "bridge.sqlite")
        let cases: [([String], String)] = [
            (["--from", state, "--to", "mysql://bridge@127.0.0.1/bridge"], "--to must be a postgresql:// connection string"),
            (["--from", "\(directory)/missing.sqlite", "--to", "postgresql://bridge@127.0.0.1/bridge"], "no SQLite state at"),
            (["--from", state, "--to", "postgresql://bridge@127.0.0.1/bridge", "--password-file", "x", "--password-env", "Y"], "not both"),
            // Port 1 on loopback: nothing listens.
            (["--from", state, "--to", "postgresql://bridge@127.0.0.1:1/bridge?connect_timeout=2"], "state migrate:"),
        ]
        for (arguments, message) in cases {
            let run = try Self.start(["state", "migrate"] + arguments, in: directory)
            #expect(run.finish() == 2, "\(arguments): \(run.errors)")
            #expect(run.errors.contains(message), "\(arguments): \(run.errors)")
        }
    }
}
