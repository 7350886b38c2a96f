import ArgumentParser
import Foundation
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeCommand

/// The whole of `bridge.toml`: `[bridge]`, `[local.NAME]`, `[channels.NAME]` and the checks
/// across sections. Each broken file must report exactly the expected TOML paths and messages.
@Suite("Bridge configuration")
struct BridgeConfigurationTests {
    /// Two accounts, a socket and a FIFO, which the broken files below refer to.
    static let base = """
        [accounts.work]
        jid = "bot@work.example"
        password_env = "WORK_PASSWORD"
        [accounts.home]
        jid = "bot@home.example"
        password_env = "HOME_PASSWORD"
        [local.ops]
        kind = "socket"
        path = "ops.sock"
        [local.alerts]
        kind = "fifo"
        path = "alerts"

        """

    /// A broken file and the problems it must report, as `path: message`.
    struct Broken: CustomTestStringConvertible, Sendable {
        var name: String
        var toml: String
        var expected: [String]
        var testDescription: String { self.name }

        init(_ name: String, _ toml: String, _ expected: [String]) {
            self.name = name
            self.toml = BridgeConfigurationTests.base + toml
            self.expected = expected
        }
    }

    static let broken: [Broken] = [
        Broken(
            "dangling account",
            "[channels.c]\nmembers = [ { local = \"ops\" }, { account = \"wrok\", jid = \"alice@work.example\" } ]",
            ["channels.c.members[1].account: no account 'wrok'"]
        ),
        Broken(
            "dangling local",
            "[channels.c]\nmembers = [ { account = \"work\", jid = \"alice@work.example\" }, { local = \"opz\", direction = \"in\" } ]",
            ["channels.c.members[1].local: no local 'opz'"]
        ),
        Broken(
            "duplicate name for an account and a local",
            "[local.work]\nkind = \"fifo\"\npath = \"work.fifo\"",
            ["local.work: name already used by accounts.work"]
        ),
        Broken(
            "duplicate member, JIDs compared case-insensitively",
            """
            [channels.c]
            members = [
              { account = "work", jid = "Alice@Work.Example" },
              { local = "ops" },
              { account = "work", jid = "alice@work.example", direction = "out" },
            ]
            """,
            ["channels.c.members[2]: repeats members[0] (work:alice@work.example)"]
        ),
        Broken(
            "FIFO as out",
            "[channels.c]\nmembers = [ { local = \"alerts\", direction = \"out\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].direction: local.alerts is a FIFO, which is input only"]
        ),
        Broken("missing path", "[local.pipe]\nkind = \"fifo\"", ["local.pipe.path: is missing"]),
        Broken("bad mode digit", "[local.pipe]\nkind = \"fifo\"\npath = \"pipe\"\nmode = \"0800\"", ["local.pipe.mode: '0800' is not a file mode from 0000 to 0777"]),
        Broken("mode above 0777", "[local.pipe]\nkind = \"fifo\"\npath = \"pipe\"\nmode = \"1777\"", ["local.pipe.mode: '1777' is not a file mode from 0000 to 0777"]),
        Broken("mode as a number", "[local.pipe]\nkind = \"fifo\"\npath = \"pipe\"\nmode = 600", ["local.pipe.mode: must be a string"]),
        Broken(
            "bad direction",
            "[channels.c]\nmembers = [ { account = \"work\", jid = \"alice@work.example\", direction = \"both\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].direction: unknown direction 'both'"]
        ),
        Broken(
            "full JID member",
            "[channels.c]\nmembers = [ { account = \"work\", jid = \"alice@work.example/phone\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].jid: 'alice@work.example/phone' is a full JID"]
        ),
        Broken(
            "invalid JID member",
            "[channels.c]\nmembers = [ { account = \"work\", jid = \"@work.example\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].jid: '@work.example' is not a valid JID: invalid JID: the localpart before '@' is empty"]
        ),
        Broken(
            "account member without jid",
            "[channels.c]\nmembers = [ { account = \"work\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].jid: is missing"]
        ),
        Broken(
            "jid on a local member",
            "[channels.c]\nmembers = [ { local = \"ops\", jid = \"alice@work.example\" }, { account = \"home\", jid = \"bob@home.example\" } ]",
            ["channels.c.members[0].jid: does not apply to a local member"]
        ),
        Broken(
            "stdio with path",
            "[local.console]\nkind = \"stdio\"\npath = \"console\"\n[channels.c]\nmembers = [ { local = \"console\" }, { local = \"ops\" } ]",
            ["local.console.path: does not apply to a stdio local"]
        ),
        Broken(
            "two stdio locals",
            """
            [local.a]
            kind = "stdio"
            [local.b]
            kind = "stdio"
            [channels.c]
            members = [ { local = "a" }, { local = "b" } ]
            """,
            ["local.b.kind: only one stdio local is allowed; local.a is already stdio"]
        ),
        Broken(
            "stdio in no channel",
            "[local.console]\nkind = \"stdio\"",
            ["local.console: is in no channel"]
        ),
        Broken("bad bridge_id", "[bridge]\nbridge_id = \"my bridge\"", ["bridge.bridge_id: must not contain spaces"]),
        Broken("empty bridge_id", "[bridge]\nbridge_id = \"\"", ["bridge.bridge_id: must not be empty"]),
        Broken("batch size 0", "[bridge]\ndelivery_batch_size = 0", ["bridge.delivery_batch_size: must be a whole number from 1 to 10000"]),
        Broken("batch size 10001", "[bridge]\ndelivery_batch_size = 10001", ["bridge.delivery_batch_size: must be a whole number from 1 to 10000"]),
        Broken(
            "member with both account and local",
            "[channels.c]\nmembers = [ { account = \"work\", local = \"ops\", jid = \"alice@work.example\" }, { local = \"ops\" } ]",
            ["channels.c.members[0]: has both account and local"]
        ),
        Broken(
            "member with neither account nor local",
            "[channels.c]\nmembers = [ { direction = \"in\" }, { local = \"ops\" } ]",
            ["channels.c.members[0]: has neither account nor local"]
        ),
        Broken(
            "account member that is the account itself",
            "[channels.c]\nmembers = [ { account = \"work\", jid = \"BOT@work.example\" }, { local = \"ops\" } ]",
            ["channels.c.members[0].jid: is accounts.work's own JID"]
        ),
        Broken(
            "two locals with one path",
            "[local.other]\nkind = \"socket\"\npath = \"ops.sock\"",
            ["local.other.path: \(Self.directoryPlaceholder)/ops.sock is already used by local.ops"]
        ),
        Broken(
            "a local on the control socket's path",
            "[local.other]\nkind = \"socket\"\npath = \"bridge.control\"",
            ["local.other.path: \(Self.directoryPlaceholder)/bridge.control is already used by bridge.control_socket"]
        ),
        Broken("missing kind", "[local.x]\npath = \"x\"", ["local.x.kind: is missing"]),
        Broken("unknown kind", "[local.x]\nkind = \"pipe\"\npath = \"x\"", ["local.x.kind: unknown kind 'pipe'"]),
        Broken("stdio-only key on a FIFO", "[local.x]\nkind = \"fifo\"\npath = \"x\"\noutput = \"json\"\nexit_on_eof = false", [
            "local.x.output: does not apply to a fifo local", "local.x.exit_on_eof: does not apply to a fifo local",
        ]),
        Broken("bad output", "[local.x]\nkind = \"stdio\"\noutput = \"xml\"\n[channels.c]\nmembers = [ { local = \"x\" } ]", ["local.x.output: unknown output 'xml'"]),
        Broken("line limit", "[local.x]\nkind = \"fifo\"\npath = \"x\"\nmax_line_bytes = 16777217", ["local.x.max_line_bytes: must be a whole number from 1 to 16777216"]),
        Broken("bad invalid_utf8", "[local.x]\nkind = \"fifo\"\npath = \"x\"\ninvalid_utf8 = \"drop\"", ["local.x.invalid_utf8: unknown invalid_utf8 policy 'drop'"]),
        Broken("empty nick", "[local.x]\nkind = \"fifo\"\npath = \"x\"\nnick = \"\"", ["local.x.nick: must not be empty"]),
        Broken("members missing", "[channels.c]\nformat = \"{body}\"", ["channels.c.members: is missing"]),
        Broken("members empty", "[channels.c]\nmembers = []", ["channels.c.members: is empty"]),
        Broken("members not an array", "[channels.c]\nmembers = \"ops\"", ["channels.c.members: must be an array of members"]),
        Broken("member not a table", "[channels.c]\nmembers = [ \"ops\" ]", ["channels.c.members[0]: must be a table"]),
        Broken("bad type", "[channels.c]\nmembers = [ { local = \"ops\" } ]\ntype = \"groupchat\"", ["channels.c.type: unknown message type 'groupchat'"]),
        Broken("format not a string", "[channels.c]\nmembers = [ { local = \"ops\" } ]\nformat = 1", ["channels.c.format: must be a string"]),
        Broken(
            "unknown keys everywhere",
            """
            [bridge]
            colour = "blue"
            [local.x]
            kind = "fifo"
            path = "x"
            size = 1
            [channels.c]
            members = [ { local = "ops", alias = "o" } ]
            topic = "t"
            """,
            ["bridge.colour: unknown key", "local.x.size: unknown key", "channels.c.topic: unknown key", "channels.c.members[0].alias: unknown key"]
        ),
        Broken("a name that is not a bare key", "[channels.\"a b\"]\nmembers = [ { local = \"ops\" } ]", ["channels.\"a b\": 'a b' is not a valid name"]),
        Broken(
            "resource conflicting with jid",
            "[accounts.third]\njid = \"me@third.example/laptop\"\nresource = \"bridge\"\npassword_env = \"X\"",
            ["accounts.third.resource: 'bridge' conflicts with the resource 'laptop' in jid"]
        ),
        Broken(
            "empty resource",
            "[accounts.third]\njid = \"me@third.example\"\nresource = \"\"\npassword_env = \"X\"",
            ["accounts.third.resource: '' is not a valid resource: invalid JID: the resourcepart after '/' is empty"]
        ),
        Broken(
            "socket path too long for sun_path",
            "[local.x]\nkind = \"socket\"\npath = \"/\(String(repeating: "s", count: 107))\"",
            ["local.x.path: /\(String(repeating: "s", count: 107)) is 108 bytes, longer than a Unix socket path may be (107)"]
        ),
    ]

    /// Stands for the temporary folder in expected messages.
    static let directoryPlaceholder = "$DIR"

    @Test("a broken file reports exactly its problems", arguments: Self.broken + Self.brokenRooms)
    func brokenFile(_ case: Broken) throws {
        let file = try ConfigurationLoaderTests.write(`case`.toml)
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        var loader = ConfigurationLoader(file: file)
        let error = #expect(throws: ConfigurationError.self) { _ = try loader.loadBridge() }
        let problems = error?.problems.map { "\($0.path): \($0.message)" } ?? []
        #expect(problems == `case`.expected.map { $0.replacingOccurrences(of: Self.directoryPlaceholder, with: directory) })
    }

    @Test("problems carry hints that say what to write")
    func hints() throws {
        let problems = try Self.problems(
            """
            [channels.c]
            members = [
              { local = "alerts", direction = "inout" },
              { account = "work", jid = "alice@work.example/phone" },
              { account = "ops", jid = "alice@work.example" },
              { local = "home" },
              { account = "nope", jid = "x@y.example" },
            ]
            """
        )
        #expect(
            problems == [
                "channels.c.members[0].direction: local.alerts is a FIFO, which is input only (hint: use direction = \"in\" (the default for it))",
                "channels.c.members[1].jid: 'alice@work.example/phone' is a full JID (hint: members are bare JIDs: write jid = \"alice@work.example\")",
                "channels.c.members[2].account: no account 'ops' (hint: 'ops' is a local; write local = \"ops\")",
                "channels.c.members[3].local: no local 'home' (hint: 'home' is an account; write account = \"home\" with the contact's jid)",
                "channels.c.members[4].account: no account 'nope' (hint: known accounts: home, work)",
            ]
        )
    }

    @Test("every problem in the file is reported at once, section by section")
    func everyProblemAtOnce() throws {
        let problems = try Self.problems(
            """
            [bridge]
            bridge_id = "a b"
            delivery_batch_size = 0
            [local.work]
            kind = "stdio"
            path = "p"
            [channels.z]
            members = [ { account = "nope", jid = "a@b/c" }, { local = "alerts" } ]
            """
        ).map { $0.components(separatedBy: " (hint:")[0] }
        #expect(
            problems == [
                "bridge.bridge_id: must not contain spaces",
                "bridge.delivery_batch_size: must be a whole number from 1 to 10000",
                "local.work: name already used by accounts.work",
                "local.work.path: does not apply to a stdio local",
                "channels.z.members[0].account: no account 'nope'",
                "channels.z.members[0].jid: 'a@b/c' is a full JID",
                "local.work: is in no channel",
            ]
        )
    }

    @Test("a full file loads into the exact model")
    func fullModel() throws {
        let file = try ConfigurationLoaderTests.write(
            """
            [bridge]
            state = "var/state.sqlite"
            control_socket = "/run/xmpp-bridge/control"
            bridge_id = "relay-1"
            delivery_batch_size = 10000

            [accounts.work]
            jid = "Bot@Work.Example"
            resource = "bridge"
            password_env = "WORK_PASSWORD"

            [accounts.home]
            jid = "bot@home.example/bridge"
            resource = "bridge"
            password_file = "home.password"

            [local.console]
            kind = "stdio"
            output = "json"
            exit_on_eof = false
            max_line_bytes = 1
            invalid_utf8 = "reject"
            nick = "shell"

            [local.alerts]
            kind = "fifo"
            path = "alerts.fifo"
            mode = "620"

            [local.ops]
            kind = "socket"
            path = "/run/xmpp-bridge/ops"

            [channels.zeta]
            members = [
              { account = "work", jid = "Alice@WORK.example", direction = "out" },
              { local = "alerts", direction = "in" },
              { local = "ops" },
            ]
            format = "{body} {unknown} {"
            type = "headline"

            [channels.alpha]
            members = [
              { account = "home", jid = "bob@home.example" },
              { account = "work", jid = "alice@work.example" },
              { local = "console", direction = "inout" },
            ]

            [channels.rooms]
            members = [
              { account = "work", room = "Dev@MUC.work.example", nick = "relay bot", password_env = "ROOM_PW", direction = "in" },
              { account = "home", room = "ops@muc.home.example" },
            ]
            subject = true
            """,
            files: ["home.password": "pw\n"]
        )
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        var loader = ConfigurationLoader(file: file)
        let configuration = try loader.loadBridge()

        #expect(configuration.file == file)
        #expect(
            configuration.settings
                == BridgeSettings(
                    statePath: "\(directory)/var/state.sqlite", controlSocketPath: "/run/xmpp-bridge/control", bridgeID: "relay-1",
                    deliveryBatchSize: 10000
                )
        )
        #expect(configuration.accounts.keys.sorted() == ["home", "work"])
        #expect(configuration.accounts["work"]?.client.jid == (try JID("bot@work.example/bridge")))
        #expect(configuration.accounts["home"]?.client.jid == (try JID("bot@home.example/bridge")))
        #expect(
            configuration.locals == [
                "console": LocalConfiguration(
                    name: "console", kind: .stdio, path: nil, mode: 0o600, output: "json", maxLineBytes: 1, invalidUTF8: "reject", nick: "shell",
                    exitOnEndOfInput: false
                ),
                "alerts": LocalConfiguration(
                    name: "alerts", kind: .fifo, path: "\(directory)/alerts.fifo", mode: 0o620, output: "text", maxLineBytes: 65536,
                    invalidUTF8: "replace", nick: "alerts", exitOnEndOfInput: true
                ),
                "ops": LocalConfiguration(
                    name: "ops", kind: .socket, path: "/run/xmpp-bridge/ops", mode: 0o600, output: "text", maxLineBytes: 65536,
                    invalidUTF8: "replace", nick: "ops", exitOnEndOfInput: true
                ),
            ]
        )
        // Sorted by name, not in file order: TOMLKit's tables do not keep it.
        #expect(
            configuration.channels == [
                RelayChannel(
                    name: "alpha",
                    members: [
                        ChannelMember(endpoint: Endpoint(transport: "home", address: "bob@home.example"), direction: .inout),
                        ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@work.example"), direction: .inout),
                        ChannelMember(endpoint: Endpoint(transport: "console"), direction: .inout),
                    ],
                    format: RelayChannel.defaultFormat, deliveryType: .chat
                ),
                RelayChannel(
                    name: "rooms",
                    members: [
                        ChannelMember(
                            endpoint: Endpoint(transport: "work", address: "dev@muc.work.example"), direction: .in,
                            room: RoomMembership(nick: "relay bot", passwordEnvironment: "ROOM_PW")
                        ),
                        ChannelMember(endpoint: Endpoint(transport: "home", address: "ops@muc.home.example"), direction: .inout, room: RoomMembership()),
                    ],
                    format: RelayChannel.defaultFormat, deliveryType: .chat, relaysSubject: true
                ),
                RelayChannel(
                    name: "zeta",
                    members: [
                        ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@work.example"), direction: .out),
                        ChannelMember(endpoint: Endpoint(transport: "alerts"), direction: .in),
                        ChannelMember(endpoint: Endpoint(transport: "ops"), direction: .inout),
                    ],
                    format: "{body} {unknown} {", deliveryType: .headline
                ),
            ]
        )
        // Rooms have no presence to relay: a two-room channel is no 1:1 link.
        #expect(!configuration.presenceChannels.contains("rooms"))
    }

    @Test("a file with only accounts loads with default settings, for load() and loadBridge()")
    func accountsOnly() throws {
        let file = try ConfigurationLoaderTests.write("[accounts.a]\njid = \"a@example.test\"\npassword_env = \"A\"\n")
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        var loader = ConfigurationLoader(file: file)
        #expect(try loader.load().keys.sorted() == ["a"])
        let configuration = try loader.loadBridge()
        #expect(
            configuration.settings
                == BridgeSettings(
                    statePath: "\(directory)/bridge.sqlite", controlSocketPath: "\(directory)/bridge.control", bridgeID: "xmpp-bridge",
                    deliveryBatchSize: 100
                )
        )
        #expect(configuration.locals.isEmpty)
        #expect(configuration.channels.isEmpty)
    }

    @Test("mode accepts three or four octal digits")
    func fileModes() {
        #expect(ConfigurationLoader.fileMode("0600") == 0o600)
        #expect(ConfigurationLoader.fileMode("644") == 0o644)
        #expect(ConfigurationLoader.fileMode("0777") == 0o777)
        #expect(ConfigurationLoader.fileMode("0") == 0)
        #expect(ConfigurationLoader.fileMode("01777") == nil)
        #expect(ConfigurationLoader.fileMode("-600") == nil)
        #expect(ConfigurationLoader.fileMode("") == nil)
        #expect(ConfigurationLoader.fileMode("0x1ff") == nil)
    }

    @Test("check exits 0 with a summary for a valid file and 2 for a broken one")
    func checkCommand() throws {
        let valid = try ConfigurationLoaderTests.write(Self.base + "[channels.c]\nmembers = [ { local = \"alerts\", direction = \"in\" }, { local = \"ops\" } ]\n")
        try CheckCommand.parse(["--config", valid]).run()
        let broken = try ConfigurationLoaderTests.write(Self.base + "[channels.c]\nmembers = [ { local = \"nope\" } ]\n")
        #expect(throws: ExitStatus.configuration.exitCode) { try CheckCommand.parse(["--config", broken]).run() }

        var loader = ConfigurationLoader(file: valid)
        let summary = CheckCommand.summary(try loader.loadBridge())
        let directory = URL(fileURLWithPath: valid).deletingLastPathComponent().path
        #expect(
            summary == [
                "\(valid): ok",
                "bridge: id xmpp-bridge, state \(directory)/bridge.sqlite, control socket \(directory)/bridge.control, batch 100",
                "accounts: 2",
                "  home: bot@home.example",
                "  work: bot@work.example",
                "locals: 2",
                "  alerts: fifo \(directory)/alerts",
                "  ops: socket \(directory)/ops.sock",
                "channels: 1",
                "  c: 2 members, chat: alerts (in), ops (inout)",
            ]
        )
    }

    /// Loads `base` + `text` and returns its problems as `path: message (hint: …)`.
    static func problems(_ text: String) throws -> [String] {
        var loader = ConfigurationLoader(file: try ConfigurationLoaderTests.write(Self.base + text))
        do {
            _ = try loader.loadBridge()
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }
}
