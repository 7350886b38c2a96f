import Foundation
import HTTPIngress
import Testing
import TransportCore

@testable import Bridge

/// `[local.NAME] kind = "http"`, channels' `template_file`, `[bridge] metrics_listen`, the
/// systemd directory defaults, and two small pieces the HTTP ingress relies on: the
/// overall delivery state and the systemd notify settings.
@Suite("HTTP ingress configuration")
struct HTTPConfigurationTests {
    static let account = """
        [accounts.work]
        jid = "bot@work.example"
        password_env = "WORK_PASSWORD"

        """

    /// An http local `web` with `keys`, in a channel with an account's contact.
    static func httpLocal(_ keys: String, member: String = "{ local = \"web\" }") -> String {
        Self.account + """
            [local.web]
            kind = "http"
            \(keys)
            [channels.alerts]
            members = [ \(member), { account = "work", jid = "alice@work.example" } ]

            """
    }

    /// Writes `text` (and `files` beside it) into a new folder; the path of bridge.toml.
    static func write(_ text: String, files: [String: String] = [:]) throws -> String {
        try ConfigurationLoaderTests.write(text, files: files)
    }

    static func load(_ text: String, files: [String: String] = [:], environment: [String: String] = [:]) throws -> (BridgeConfiguration, String) {
        let file = try Self.write(text, files: files)
        var loader = ConfigurationLoader(file: file, environment: environment)
        return (try loader.loadBridge(), URL(fileURLWithPath: file).deletingLastPathComponent().path)
    }

    /// Every problem as `path: message`, and the folder the file is in.
    static func problems(_ text: String, files: [String: String] = [:]) throws -> (problems: [String], directory: String) {
        let file = try Self.write(text, files: files)
        var loader = ConfigurationLoader(file: file, environment: [:])
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        do {
            _ = try loader.loadBridge()
            return ([], directory)
        } catch {
            return (error.problems.map { "\($0.path): \($0.message)" }, directory)
        }
    }

    // MARK: - A valid http local

    @Test("a minimal http local: loopback listen, defaults for the rest, member direction in")
    func minimal() throws {
        let (configuration, _) = try Self.load(Self.httpLocal("listen = \"127.0.0.1:8080\""))
        let web = try #require(configuration.locals["web"])
        #expect(web.kind == .http)
        #expect(web.path == nil)
        #expect(web.nick == "web")
        #expect(web.http == HTTPLocalSettings(listen: .host("127.0.0.1", port: 8080), token: nil, maxBodyBytes: 1 << 20, waitTimeout: .seconds(30)))
        let channel = try #require(configuration.channels.first)
        #expect(channel.members == [
            ChannelMember(endpoint: Endpoint(transport: "web"), direction: .in),
            ChannelMember(endpoint: Endpoint(transport: "work", address: "alice@work.example"), direction: .inout),
        ])
        #expect(configuration.webhookTemplates.isEmpty)
        #expect(configuration.settings.metricsListen == nil)
    }

    @Test("every http key set")
    func allKeys() throws {
        let (configuration, directory) = try Self.load(
            Self.httpLocal(
                """
                listen = "[::1]:9000"
                token_file = "web.token"
                max_body_bytes = 4096
                wait_timeout = "2m"
                nick = "grafana"
                """
            ),
            files: ["web.token": "t0ken\n"]
        )
        let web = try #require(configuration.locals["web"])
        #expect(web.nick == "grafana")
        #expect(web.http == HTTPLocalSettings(listen: .host("::1", port: 9000), token: .file("\(directory)/web.token"), maxBodyBytes: 4096, waitTimeout: .seconds(120)))
        // The description names the token's source, never the token.
        #expect(web.http?.description.contains("\(directory)/web.token") == true)
        #expect(web.http?.description.contains("t0ken") == false)
    }

    @Test("an explicit direction in is accepted")
    func explicitIn() throws {
        let (configuration, _) = try Self.load(Self.httpLocal("listen = \"127.0.0.1:8080\"", member: "{ local = \"web\", direction = \"in\" }"))
        #expect(configuration.channels.first?.members.first?.direction == .in)
    }

    @Test("a Unix socket listen is resolved beside the file and local-only")
    func unixSocket() throws {
        let (configuration, directory) = try Self.load(Self.httpLocal("listen = \"unix:web.sock\"\nmode = \"0660\""))
        let web = try #require(configuration.locals["web"])
        #expect(web.http?.listen == .unixSocket("\(directory)/web.sock"))
        #expect(web.mode == 0o660)
    }

    @Test("0.0.0.0 with token_env is allowed")
    func publicWithToken() throws {
        let (configuration, _) = try Self.load(Self.httpLocal("listen = \"0.0.0.0:8080\"\ntoken_env = \"WEB_TOKEN\""))
        #expect(configuration.locals["web"]?.http?.token == .environment("WEB_TOKEN"))
        #expect(configuration.locals["web"]?.http?.listen == .host("0.0.0.0", port: 8080))
    }

    // MARK: - Broken http locals

    @Test("http without listen")
    func missingListen() throws {
        #expect(try Self.problems(Self.httpLocal("")).problems == ["local.web.listen: is missing"])
    }

    @Test(
        "listen values that are not an address",
        arguments: [
            ("listen = \"8080\"", "local.web.listen: '8080' is neither host:port nor a socket path"),
            ("listen = \"127.0.0.1:0\"", "local.web.listen: '127.0.0.1:0' is neither host:port nor a socket path"),
            ("listen = \"::1:8080\"", "local.web.listen: '::1:8080' is neither host:port nor a socket path"),
            ("listen = \"\"", "local.web.listen: must not be empty"),
            ("listen = 8080", "local.web.listen: must be a string"),
        ]
    )
    func badListen(keys: String, expected: String) throws {
        #expect(try Self.problems(Self.httpLocal(keys)).problems == [expected])
    }

    @Test("a listener reachable from other machines needs a token", arguments: ["0.0.0.0:8080", "192.168.1.1:80", "[::]:8080", "example.org:80"])
    func publicWithoutToken(listen: String) throws {
        let display = HTTPListenAddress(listen)!.description
        #expect(try Self.problems(Self.httpLocal("listen = \"\(listen)\"")).problems == ["local.web.listen: \(display) is reachable from other machines, and no token is set"])
    }

    @Test("an unreadable token_file")
    func unreadableTokenFile() throws {
        let (problems, directory) = try Self.problems(Self.httpLocal("listen = \"127.0.0.1:8080\"\ntoken_file = \"missing.token\""))
        #expect(problems == ["local.web.token_file: cannot read \(directory)/missing.token"])
    }

    @Test("two token sources")
    func twoTokenSources() throws {
        let result = try Self.problems(
            Self.httpLocal("listen = \"127.0.0.1:8080\"\ntoken_file = \"web.token\"\ntoken_env = \"WEB_TOKEN\""), files: ["web.token": "t\n"]
        )
        #expect(result.problems == ["local.web: has two token sources"])
    }

    @Test(
        "keys that do not apply to an http local",
        arguments: [
            ("path = \"web.sock\"", "local.web.path: does not apply to an http local"),
            ("max_line_bytes = 1024", "local.web.max_line_bytes: does not apply to an http local"),
            ("invalid_utf8 = \"reject\"", "local.web.invalid_utf8: does not apply to an http local"),
            ("output = \"json\"", "local.web.output: does not apply to an http local"),
            ("exit_on_eof = false", "local.web.exit_on_eof: does not apply to an http local"),
        ]
    )
    func keysNotForHTTP(key: String, expected: String) throws {
        #expect(try Self.problems(Self.httpLocal("listen = \"127.0.0.1:8080\"\n\(key)")).problems == [expected])
    }

    @Test(
        "max_body_bytes and wait_timeout out of range",
        arguments: [
            ("max_body_bytes = 0", "local.web.max_body_bytes: must be a whole number from 1 to 16777216"),
            ("max_body_bytes = 16777217", "local.web.max_body_bytes: must be a whole number from 1 to 16777216"),
            ("wait_timeout = \"unlimited\"", "local.web.wait_timeout: must be from 1s to 1h"),
            ("wait_timeout = \"2h\"", "local.web.wait_timeout: must be from 1s to 1h"),
            ("wait_timeout = \"0s\"", "local.web.wait_timeout: '0s' is not a period"),
            ("wait_timeout = \"30\"", "local.web.wait_timeout: '30' is not a period"),
        ]
    )
    func limits(key: String, expected: String) throws {
        #expect(try Self.problems(Self.httpLocal("listen = \"127.0.0.1:8080\"\n\(key)")).problems == [expected])
    }

    @Test("http keys on a socket local", arguments: ["listen = \"127.0.0.1:8080\"", "token_env = \"T\"", "token_file = \"t\"", "max_body_bytes = 10", "wait_timeout = \"5s\""])
    func httpKeysElsewhere(key: String) throws {
        let name = String(key.prefix(while: { $0 != " " }))
        let text = Self.account + """
            [local.ops]
            kind = "socket"
            path = "ops.sock"
            \(key)
            [channels.c]
            members = [ { local = "ops" }, { account = "work", jid = "alice@work.example" } ]
            """
        #expect(try Self.problems(text).problems == ["local.ops.\(name): applies only to an http local"])
    }

    @Test("an http member may only send", arguments: ["out", "inout"])
    func directionOut(direction: String) throws {
        let text = Self.httpLocal("listen = \"127.0.0.1:8080\"", member: "{ local = \"web\", direction = \"\(direction)\" }")
        #expect(try Self.problems(text).problems == ["channels.alerts.members[0].direction: local.web is an http local, which is input only"])
    }

    @Test("two http locals cannot share a socket path, nor take the state file's")
    func claimedSocket() throws {
        let text = Self.account + """
            [local.a]
            kind = "http"
            listen = "/tmp/xb-http-claimed.sock"
            [local.b]
            kind = "http"
            listen = "unix:/tmp/xb-http-claimed.sock"
            [channels.c]
            members = [ { local = "a" }, { local = "b" }, { account = "work", jid = "alice@work.example" } ]
            """
        #expect(try Self.problems(text).problems == ["local.b.listen: /tmp/xb-http-claimed.sock is already used by local.a.listen"])
    }

    @Test("an http listen socket and a socket local's path naming the same file clash")
    func claimedSocketDotSlash() throws {
        let text = Self.account + """
            [local.ops]
            kind = "socket"
            path = "shared.sock"
            [local.web]
            kind = "http"
            listen = "./shared.sock"
            [channels.c]
            members = [ { local = "ops" }, { local = "web" }, { account = "work", jid = "alice@work.example" } ]
            """
        let (problems, directory) = try Self.problems(text)
        #expect(problems == ["local.web.listen: \(directory)/shared.sock is already used by local.ops"])
    }

    @Test("a ./relative listen socket resolves to a clean absolute path")
    func dotSlashListen() throws {
        let (configuration, directory) = try Self.load(Self.httpLocal("listen = \"./web.sock\""))
        #expect(configuration.locals["web"]?.http?.listen == .unixSocket("\(directory)/web.sock"))
    }

    // MARK: - template_file

    @Test("a valid template_file is read and kept by channel")
    func validTemplate() throws {
        let template = "{{#firing}}{{name}}{{/firing}}\n"
        let (configuration, _) = try Self.load(
            Self.httpLocal("listen = \"127.0.0.1:8080\"") + "template_file = \"alerts.mustache\"\n", files: ["alerts.mustache": template]
        )
        #expect(configuration.webhookTemplates == ["alerts": template])
    }

    @Test("an unreadable template_file")
    func unreadableTemplate() throws {
        let (problems, directory) = try Self.problems(Self.httpLocal("listen = \"127.0.0.1:8080\"") + "template_file = \"missing.mustache\"\n")
        #expect(problems == ["channels.alerts.template_file: cannot read \(directory)/missing.mustache as UTF-8 text"])
    }

    @Test("a template_file that is not UTF-8")
    func nonUTF8Template() throws {
        let file = try Self.write(Self.httpLocal("listen = \"127.0.0.1:8080\"") + "template_file = \"latin1.mustache\"\n")
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        try Data([0x63, 0x61, 0x66, 0xE9]).write(to: URL(fileURLWithPath: "\(directory)/latin1.mustache"))
        var loader = ConfigurationLoader(file: file, environment: [:])
        do {
            _ = try loader.loadBridge()
            Issue.record("a template that is not UTF-8 was accepted")
        } catch {
            #expect(error.problems.map { "\($0.path): \($0.message)" } == ["channels.alerts.template_file: cannot read \(directory)/latin1.mustache as UTF-8 text"])
        }
    }

    @Test("a template_file that is not valid Mustache")
    func invalidTemplate() throws {
        let (problems, directory) = try Self.problems(
            Self.httpLocal("listen = \"127.0.0.1:8080\"") + "template_file = \"bad.mustache\"\n", files: ["bad.mustache": "{{#firing}}never closed"]
        )
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("channels.alerts.template_file: \(directory)/bad.mustache: not a valid Mustache template: ") == true)
    }

    @Test("an empty template_file value")
    func emptyTemplateName() throws {
        #expect(try Self.problems(Self.httpLocal("listen = \"127.0.0.1:8080\"") + "template_file = \"\"\n").problems == ["channels.alerts.template_file: must not be empty"])
    }

    // MARK: - metrics_listen

    @Test(
        "metrics_listen: host:port or a socket resolved beside the file",
        arguments: [("127.0.0.1:9464", "127.0.0.1:9464"), ("[::1]:9464", "[::1]:9464"), ("0.0.0.0:9464", "0.0.0.0:9464"), ("/run/m.sock", "/run/m.sock")]
    )
    func metricsListen(text: String, expected: String) throws {
        let (configuration, _) = try Self.load("[bridge]\nmetrics_listen = \"\(text)\"\n")
        #expect(configuration.settings.metricsListen?.description == expected)
    }

    @Test("a relative metrics socket is resolved beside the file")
    func metricsSocketRelative() throws {
        let (configuration, directory) = try Self.load("[bridge]\nmetrics_listen = \"unix:metrics.sock\"\n")
        #expect(configuration.settings.metricsListen == .unixSocket("\(directory)/metrics.sock"))
    }

    @Test(
        "bad metrics_listen values",
        arguments: [
            ("\"9464\"", "bridge.metrics_listen: '9464' is neither host:port nor a socket path"),
            ("\"localhost:70000\"", "bridge.metrics_listen: 'localhost:70000' is neither host:port nor a socket path"),
            ("\"\"", "bridge.metrics_listen: must not be empty"),
            ("9464", "bridge.metrics_listen: must be a string"),
        ]
    )
    func badMetricsListen(value: String, expected: String) throws {
        #expect(try Self.problems("[bridge]\nmetrics_listen = \(value)\n").problems == [expected])
    }

    // MARK: - systemd directories

    @Test("STATE_DIRECTORY and RUNTIME_DIRECTORY move the default state file and control socket")
    func systemdDirectories() throws {
        let environment = ["STATE_DIRECTORY": "/var/lib/xmpp-bridge", "RUNTIME_DIRECTORY": "/run/xmpp-bridge"]
        let (withoutTable, _) = try Self.load("", environment: environment)
        #expect(withoutTable.settings.statePath == "/var/lib/xmpp-bridge/bridge.sqlite")
        #expect(withoutTable.settings.controlSocketPath == "/run/xmpp-bridge/bridge.control")
        let (withTable, _) = try Self.load("[bridge]\nbridge_id = \"b\"\n", environment: environment)
        #expect(withTable.settings.statePath == "/var/lib/xmpp-bridge/bridge.sqlite")
        #expect(withTable.settings.controlSocketPath == "/run/xmpp-bridge/bridge.control")
    }

    @Test("with several directories (colon-separated) the first is used")
    func systemdSeveralDirectories() throws {
        let (configuration, _) = try Self.load("", environment: ["STATE_DIRECTORY": "/var/lib/a:/var/lib/b", "RUNTIME_DIRECTORY": "/run/a:/run/b"])
        #expect(configuration.settings.statePath == "/var/lib/a/bridge.sqlite")
        #expect(configuration.settings.controlSocketPath == "/run/a/bridge.control")
    }

    @Test("explicit state and control_socket still win over the systemd directories")
    func explicitWins() throws {
        let environment = ["STATE_DIRECTORY": "/var/lib/xmpp-bridge", "RUNTIME_DIRECTORY": "/run/xmpp-bridge"]
        let (configuration, directory) = try Self.load("[bridge]\nstate = \"mine.sqlite\"\ncontrol_socket = \"/tmp/xb.control\"\n", environment: environment)
        #expect(configuration.settings.statePath == "\(directory)/mine.sqlite")
        #expect(configuration.settings.controlSocketPath == "/tmp/xb.control")
    }

    @Test("without the variables the defaults sit beside the file")
    func noSystemd() throws {
        let (configuration, directory) = try Self.load("", environment: [:])
        #expect(configuration.settings.statePath == "\(directory)/bridge.sqlite")
        #expect(configuration.settings.controlSocketPath == "\(directory)/bridge.control")
    }

    // MARK: - MessageDeliveryStatus.overall

    typealias Target = MessageDeliveryStatus.Target

    static func isAccount(_ target: Target) -> Bool { target.target.contains(":") }

    @Test("any failed target makes the whole failed, even a local one")
    func failedWins() {
        let targets = [Target(target: "work:alice@example.org", state: .displayed), Target(target: "ops", state: .failed, error: "gone")]
        #expect(MessageDeliveryStatus.overall(targets, counts: Self.isAccount) == .failed)
    }

    @Test("only account targets count when there are any: the least advanced of them")
    func accountTargetsCount() {
        let targets = [
            Target(target: "work:alice@example.org", state: .received), Target(target: "home:bob@example.net", state: .displayed),
            Target(target: "ops", state: .queued),
        ]
        #expect(MessageDeliveryStatus.overall(targets, counts: Self.isAccount) == .received)
        #expect(MessageDeliveryStatus.overall(targets, counts: { _ in true }) == .queued)
    }

    @Test("with no account targets, every target counts")
    func noAccountTargets() {
        let targets = [Target(target: "ops", state: .sent), Target(target: "console", state: .queued)]
        #expect(MessageDeliveryStatus.overall(targets, counts: Self.isAccount) == .queued)
        #expect(MessageDeliveryStatus.overall([Target(target: "ops", state: .displayed)], counts: Self.isAccount) == .displayed)
    }

    @Test("no targets at all is queued")
    func noTargets() {
        #expect(MessageDeliveryStatus.overall([], counts: Self.isAccount) == .queued)
    }

    @Test("states are ordered failed < queued < sent < received < displayed")
    func stateOrder() {
        let states: [MessageDeliveryStatus.State] = [.displayed, .failed, .received, .queued, .sent]
        #expect(states.sorted() == [.failed, .queued, .sent, .received, .displayed])
    }

    // MARK: - SystemdNotifier.Settings

    typealias NotifySettings = SystemdNotifier<ContinuousClock>.Settings

    @Test("without NOTIFY_SOCKET (or with an empty one) there is nothing to notify")
    func noNotifySocket() {
        #expect(NotifySettings(environment: [:], pid: 42) == nil)
        #expect(NotifySettings(environment: ["WATCHDOG_USEC": "30000000"], pid: 42) == nil)
        #expect(NotifySettings(environment: ["NOTIFY_SOCKET": ""], pid: 42) == nil)
    }

    @Test("NOTIFY_SOCKET alone: notify, no watchdog")
    func notifyOnly() throws {
        let settings = try #require(NotifySettings(environment: ["NOTIFY_SOCKET": "/run/systemd/notify"], pid: 42))
        #expect(settings.socketPath == "/run/systemd/notify")
        #expect(settings.watchdogInterval == nil)
        #expect(NotifySettings(environment: ["NOTIFY_SOCKET": "@abstract"], pid: 42)?.socketPath == "@abstract")
    }

    @Test("WATCHDOG_USEC=30000000 pings every 15 s (half the interval)")
    func watchdog() throws {
        let settings = try #require(NotifySettings(environment: ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000"], pid: 42))
        #expect(settings.watchdogInterval == .seconds(15))
        #expect(NotifySettings(environment: ["NOTIFY_SOCKET": "/n", "WATCHDOG_USEC": "3"], pid: 42)?.watchdogInterval == .microseconds(1))
    }

    @Test("WATCHDOG_PID of this process keeps the watchdog; another pid's is not ours")
    func watchdogPID() {
        let environment = ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "42"]
        #expect(NotifySettings(environment: environment, pid: 42)?.watchdogInterval == .seconds(15))
        let other = NotifySettings(environment: environment, pid: 43)
        #expect(other?.socketPath == "/run/systemd/notify")
        #expect(other != nil && other?.watchdogInterval == nil)
    }

    @Test("a WATCHDOG_USEC or WATCHDOG_PID that is not a positive number means no watchdog", arguments: [
        ["WATCHDOG_USEC": "0"], ["WATCHDOG_USEC": "-5"], ["WATCHDOG_USEC": "abc"], ["WATCHDOG_USEC": ""],
        ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "abc"], ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": ""],
    ])
    func noWatchdog(extra: [String: String]) throws {
        let settings = try #require(NotifySettings(environment: extra.merging(["NOTIFY_SOCKET": "/n"]) { $1 }, pid: 42))
        #expect(settings.watchdogInterval == nil)
    }
}
