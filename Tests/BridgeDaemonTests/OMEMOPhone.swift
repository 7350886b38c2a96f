import Foundation
import IntegrationSupport
import TestServers
import TestSupport
import ThrowawayProsody

/// An OMEMO phone for the daemon tests (issue 41): `Tests/Peers/omemo_phone.py`, slixmpp
/// with slixmpp-omemo, logged in as a user of the test server. Its keys live in a file in the
/// server's directory, so a phone started again is the same device. It reports what it
/// receives as JSON lines (read here from its output file) and takes commands on a socket.
final class OMEMOPhone {
    struct Event {
        var fields: [String: Any]
        var kind: String { self.fields["event"] as? String ?? "" }
        var body: String? { self.fields["body"] as? String }
        var encrypted: Bool { self.fields["encrypted"] as? Bool ?? false }
        var from: String? { self.fields["from"] as? String }
    }

    let user: String
    let process: ChildProcess
    private let output: String
    private let control: UnixLineClient
    /// Its device id.
    let device: Int

    /// The Python with slixmpp-omemo (`XMPP_BRIDGE_TEST_PYTHON`, made by scripts/test.sh);
    /// nil when there is none (a failure under CI).
    static var python: String? { ProcessInfo.processInfo.environment["XMPP_BRIDGE_TEST_PYTHON"] }

    /// Starts the phone of `user` on `server` and waits until it is online with its device.
    /// `data`: the name of its key file (another name: another device of the same user).
    static func start(_ user: String, on server: any TestXMPPServer, data: String? = nil) async throws -> OMEMOPhone {
        guard let python = Self.python else { throw TestFailure("XMPP_BRIDGE_TEST_PYTHON (a Python with slixmpp-omemo; scripts/test.sh makes one) is missing") }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Peers/omemo_phone.py").standardized.path
        let directory = server.directory
        let stamp = UUID().uuidString.prefix(8)
        let output = "\(directory)/phone-\(user)-\(stamp).out"
        let socket = "\(directory)/phone-\(user)-\(stamp).sock"
        let process = try ChildProcess(
            executable: python,
            arguments: [
                script, "--jid", "\(user)@\(server.domain)", "--password", "pw", "--port", "\(server.c2sPort)",
                "--ca-file", server.certificate?.certificateFile ?? "", "--data", "\(directory)/phone-\(data ?? user).json", "--control", socket,
            ],
            stdin: "/dev/null", stdout: output, stderr: "\(output).err"
        )
        let online = await eventuallyValue(timeout: .seconds(60), every: .milliseconds(50)) { () -> Int? in
            if let event = Self.events(in: output).first(where: { $0.kind == "online" }) { return event.fields["device"] as? Int }
            return process.isRunning ? nil : -1
        }
        guard let device = online, device > 0, let control = try? UnixLineClient(path: socket) else {
            process.terminate(timeout: 2)
            let errors = (try? String(contentsOfFile: "\(output).err", encoding: .utf8)) ?? ""
            throw TestFailure("the OMEMO phone of \(user) did not come online: \(errors.suffix(3000))")
        }
        return OMEMOPhone(user: user, process: process, output: output, control: control, device: device)
    }

    private init(user: String, process: ChildProcess, output: String, control: UnixLineClient, device: Int) {
        self.user = user
        self.process = process
        self.output = output
        self.control = control
        self.device = device
    }

    deinit {
        self.process.terminate(timeout: 2)
    }

    private static func events(in file: String) -> [Event] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]).map(Event.init)
        }
    }

    /// Everything it reported so far.
    var events: [Event] { Self.events(in: self.output) }

    /// The messages it received (decrypted where they were encrypted).
    var messages: [Event] { self.events.filter { $0.kind == "message" } }

    /// What it could not decrypt.
    var undecryptable: [Event] { self.events.filter { $0.kind == "undecryptable" } }

    /// Sends `text` to `to` (encrypted unless told otherwise).
    func send(_ text: String, to: String, id: String? = nil, encrypted: Bool = true) throws {
        var command: [String: Any] = ["send": text, "to": to, "encrypted": encrypted]
        if let id { command["id"] = id }
        try self.control.send(String(decoding: try JSONSerialization.data(withJSONObject: command), as: UTF8.self))
    }

    /// Sends `texts` to `to` encrypted, all sealed first and then written at once.
    func sendBurst(_ texts: [String], to: String) throws {
        try self.control.send(String(decoding: try JSONSerialization.data(withJSONObject: ["burst": texts, "to": to] as [String: Any]), as: UTF8.self))
    }

    /// Reads `jid`'s device lists again, as a phone does for a contact it starts writing
    /// to, and waits until it has them.
    func refresh(_ jid: String) async throws {
        let before = self.events.filter { $0.kind == "refreshed" }.count
        try self.control.send(String(decoding: try JSONSerialization.data(withJSONObject: ["refresh": jid]), as: UTF8.self))
        let done = await eventually(timeout: .seconds(20), every: .milliseconds(50)) { self.events.filter { $0.kind == "refreshed" }.count > before }
        guard done else { throw TestFailure("the phone did not read \(jid)'s device lists: \(self.events.suffix(3).map(\.fields)) \(self.errors.suffix(1000))") }
    }

    /// Waits until it received a message whose body ends with `text` (after the channel's
    /// prefix); nil on timeout.
    func waitForMessage(_ text: String, timeout: Duration = .seconds(20)) async -> Event? {
        await eventuallyValue(timeout: timeout, every: .milliseconds(50)) { self.messages.first { $0.body?.hasSuffix(text) == true } }
    }

    /// Waits until an event satisfies `predicate`.
    func waitFor(timeout: Duration = .seconds(20), _ predicate: @escaping (Event) -> Bool) async -> Event? {
        await eventuallyValue(timeout: timeout, every: .milliseconds(50)) { self.events.first(where: predicate) }
    }

    /// Its error output, for a failure's message.
    var errors: String { (try? String(contentsOfFile: "\(self.output).err", encoding: .utf8)) ?? "" }

    /// Stops it (SIGTERM, then SIGKILL).
    func stop() {
        self.process.terminate(timeout: 5)
    }
}
