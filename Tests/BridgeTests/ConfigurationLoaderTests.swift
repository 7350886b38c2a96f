import Foundation
import GatewayComponent
import HTTPIngress
import Testing
import TransportCore
import XMPP

@testable import Bridge

/// `bridge.toml` accounts: the shipped example loads, and broken files report every
/// problem with its TOML path.
@Suite("Configuration loader")
struct ConfigurationLoaderTests {
    static func write(_ text: String, files: [String: String] = [:]) throws -> String {
        let directory = NSTemporaryDirectory() + "xmpp-bridge-config-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, content) in files {
            try content.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8)
        }
        let path = "\(directory)/bridge.toml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func problems(_ text: String, files: [String: String] = [:]) throws -> [String] {
        var loader = ConfigurationLoader(file: try Self.write(text, files: files))
        do {
            _ = try loader.load()
            return []
        } catch {
            return error.problems.map { "\($0.path): \($0.message)" }
        }
    }

    @Test("an account's nick and avatar: a PNG or JPEG up to 64 KiB is read; a larger, unreadable or other file and a bad nick are problems at their paths")
    func nickAndAvatar() throws {
        func account(_ keys: String) -> String {
            "[accounts.work]\njid = \"bot@example.org\"\npassword_env = \"PW\"\n" + keys
        }
        let png = Array(Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAEElEQVR4nGP4z8AAQQxwFgBB0gX7h/C5SAAAAABJRU5ErkJggg==")!)
        let path = try Self.write(account("nick = \" Ops bridge \"\navatar = \"bot.png\"\n"))
        let folder = (path as NSString).deletingLastPathComponent
        try Data(png).write(to: URL(fileURLWithPath: "\(folder)/bot.png"))
        var loader = ConfigurationLoader(file: path)
        let profile = try #require(try loader.load()["work"]).profile
        #expect(profile.nick == "Ops bridge" && profile.avatar?.type == "image/png" && profile.avatar?.bytes == png)

        let big = String(repeating: "x", count: 70_000)
        #expect(try Self.problems(account("avatar = \"big.png\"\n"), files: ["big.png": "\u{89}PNG" + big]).contains { $0.hasPrefix("accounts.work.avatar:") && $0.contains("64 KiB") })
        #expect(try Self.problems(account("avatar = \"a.gif\"\n"), files: ["a.gif": "GIF89a"]).contains { $0.hasPrefix("accounts.work.avatar:") && $0.contains("not a PNG or JPEG") })
        #expect(try Self.problems(account("avatar = \"missing.png\"\n")).contains { $0.hasPrefix("accounts.work.avatar: cannot read") })
        #expect(try Self.problems(account("nick = \"a\\u0007b\"\n")).contains { $0.hasPrefix("accounts.work.nick:") })
        #expect(try Self.problems(account("nick = \"  \"\n")).contains { $0.hasPrefix("accounts.work.nick:") })
    }

    @Test("archive and archive_days per channel: false and 0 are kept; anything else is a problem at its path")
    func archiveKeys() throws {
        let base = """
            [local.in]
            kind = "stdio"
            [local.out]
            kind = "socket"
            path = "out.sock"

            """
        func channel(_ keys: String) -> String { base + "[channels.c]\nmembers = [ { local = \"in\", direction = \"in\" }, { local = \"out\", direction = \"out\" } ]\n" + keys }
        var loader = ConfigurationLoader(file: try Self.write(channel("archive = false\narchive_days = 0\n")))
        let configuration = try loader.loadBridge()
        #expect(configuration.channels.first?.archives == false && configuration.channels.first?.archiveDays == 0)
        #expect(try Self.problems(channel("archive = \"yes\"\n")).contains { $0.hasPrefix("channels.c.archive:") })
        #expect(try Self.problems(channel("archive_days = -1\n")).contains { $0.hasPrefix("channels.c.archive_days:") })
        #expect(try Self.problems(channel("archive_days = \"90d\"\n")).contains { $0.hasPrefix("channels.c.archive_days:") })
    }

    @Test("bridge.toml.example loads with every account, local and channel")
    func example() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bridge.toml.example").path
        let text = try String(contentsOfFile: source, encoding: .utf8)
        let template = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../contrib/alerts.mustache").path
        let file = try Self.write(text, files: ["work.password": "secret\n", "alerts.mustache": try String(contentsOfFile: template, encoding: .utf8)])
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        var loader = ConfigurationLoader(file: file)
        let accounts = try loader.load()
        #expect(accounts.keys.sorted() == ["home", "work"])
        let work = try #require(accounts["work"])
        #expect(work.client.jid == (try JID("bridge@work.example/bridge")))
        #expect(work.client.tlsMode == .startTLS)
        #expect(work.client.tls.certificateVerification == .full)
        #expect(work.subscriptionPolicy == .acceptKnown)
        #expect("\(work.password)".hasSuffix("/work.password"))
        #expect("\(try #require(accounts["home"]).password)" == "environment variable HOME_XMPP_PASSWORD")

        let configuration = try loader.loadBridge()
        var settings = BridgeSettings(
            statePath: "\(directory)/bridge.sqlite", controlSocketPath: "\(directory)/bridge.control", bridgeID: "xmpp-bridge",
            deliveryBatchSize: 100
        )
        settings.metricsListen = .host("127.0.0.1", port: 9464)
        #expect(configuration.settings == settings)
        #expect(configuration.locals.mapValues(\.kind) == ["console": .stdio, "alerts": .fifo, "ops": .socket, "web": .http])
        #expect(configuration.locals["web"]?.http == HTTPLocalSettings(listen: .host("127.0.0.1", port: 8080), token: .environment("XMPP_BRIDGE_HTTP_TOKEN")))
        #expect(configuration.webhookTemplates["alerts"]?.trimmingCharacters(in: .newlines) == WebhookTemplate.defaultText)
        #expect(configuration.locals["alerts"]?.mode == 0o620)
        #expect(configuration.locals["console"]?.exitOnEndOfInput == false)
        #expect(configuration.channels.map(\.name) == ["alerts", "alice-bob", "dev", "oncall"])
        #expect(configuration.channels.map(\.deliveryType) == [.chat, .chat, .chat, .chat])
        #expect(configuration.channels.map(\.passesReceipts) == [false, true, false, false], "on for the 1:1 link only")
        #expect(configuration.channels.map(\.reuploadMaxBytes) == [nil, nil, nil, nil])
        let oncall = try #require(configuration.paging["oncall"])
        #expect(oncall.isPaging && oncall.tiers.count == 1 && oncall.maxPerMinute == 20 && oncall.quiet.count == 1)
        #expect(configuration.paging["alerts"]?.isPaging == false)
        #expect(configuration.channels.map(\.archives) == [true, true, true, true])
        #expect(configuration.channels.map(\.archiveDays) == [90, 90, 90, 90])
        let filter = try #require(configuration.filters["dev"])
        #expect(filter.ignore.count == 2 && filter.replace.first?.pattern.source == #"(?i)password=\S+"# && filter.onlyFrom?.count == 2)
        #expect(configuration.channels.map { $0.members.map(\.endpoint.description) } == [
            ["alerts", "web", "ops", "console", "work:alice@work.example"],
            ["work:alice@work.example", "home:bob@home.example"],
            ["work:dev@muc.work.example", "home:dev@chat.home.example", "ops"],
            ["web", "work:alice@work.example"],
        ])
        #expect(configuration.channels.first { $0.name == "dev" }?.members.map(\.room) == [
            RoomMembership(nick: "bridge"), RoomMembership(passwordEnvironment: "DEV_ROOM_PASSWORD"), nil,
        ])
        #expect(configuration.accounts["work"]?.roomTimings.pingInterval == .seconds(300))
        #expect(configuration.accounts["work"]?.roomTimings.rejoinAfterKick == .seconds(60))
        let gateway = try #require(configuration.gateways["home"])
        #expect(gateway.domain == "home.work.example" && gateway.host == "127.0.0.1" && gateway.port == 5347 && !gateway.allowRemote)
        #expect(gateway.secret == .environment("GATEWAY_SECRET") && gateway.displayName == "Home account")
        #expect(gateway.registration == .allowlist && gateway.allow == ["*@work.example"] && gateway.keepalive == .seconds(60))
        #expect(gateway.users == [GatewayUser(jid: "alice@work.example", account: "home", configured: true)])
        #expect(gateway.transportName == "gateway.home" && gateway.serverDomain == "work.example" && gateway.maxStanzaBytes == 65536)
    }

    @Test("state in PostgreSQL (issue 26): a postgresql:// URL with a password file or variable; the host's own files named apart; two password sources, or one for a SQLite state, are problems")
    func postgresState() throws {
        let account = "[accounts.work]\njid = \"bridge@work.example\"\npassword_env = \"X\"\n"
        let url = "postgresql://bridge@db1.example,db2.example/bridge?target_session_attrs=read-write"
        let file = try Self.write("[bridge]\nstate = \"\(url)\"\nstate_password_file = \"db.password\"\n" + account, files: ["db.password": "s3cret\n"])
        var loader = ConfigurationLoader(file: file, environment: ["X": "pw"])
        let settings = try loader.loadBridge().settings
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        #expect(settings.stateURL == url)
        #expect(settings.statePassword == .file("\(directory)/db.password"))
        #expect(settings.statePath == "\(directory)/bridge.local", "stream ledgers and the instance lock, apart from any bridge.sqlite")
        var byVariable = ConfigurationLoader(file: try Self.write("[bridge]\nstate = \"postgres://db/bridge\"\nstate_password_env = \"DB\"\n" + account), environment: ["X": "pw"])
        #expect(try byVariable.loadBridge().settings.statePassword == .environment("DB"))
        #expect(try Self.problems("[bridge]\nstate = \"\(url)\"\nstate_password_file = \"db.password\"\nstate_password_env = \"DB\"\n" + account, files: ["db.password": "x"])
            .contains("bridge: has both state_password_file and state_password_env"))
        #expect(try Self.problems("[bridge]\nstate_password_env = \"DB\"\n" + account).contains("bridge: has a state password but a SQLite state"))
        #expect(try Self.problems("[bridge]\nstate = \"\(url)\"\nstate_password_file = \"missing\"\n" + account).contains { $0.hasPrefix("bridge.state_password_file: cannot read") })
    }

    @Test("instance names this instance (default: the host name); lease_ttl is 3s to 10m (default 10s)")
    func instanceAndLease() throws {
        let account = "[accounts.work]\njid = \"bridge@work.example\"\npassword_env = \"X\"\n"
        var loader = ConfigurationLoader(file: try Self.write("[bridge]\ninstance = \"node-a\"\nlease_ttl = \"30s\"\n" + account), environment: ["X": "pw"])
        let settings = try loader.loadBridge().settings
        #expect(settings.instance == "node-a")
        #expect(settings.leaseTTL == .seconds(30))
        var defaults = ConfigurationLoader(file: try Self.write(account), environment: ["X": "pw"])
        let fallback = try defaults.loadBridge().settings
        #expect(fallback.instance == ProcessInfo.processInfo.hostName)
        #expect(fallback.leaseTTL == .seconds(10))
        #expect(try Self.problems("[bridge]\ninstance = \"node a\"\n" + account).contains("bridge.instance: must not contain spaces or control characters"))
        #expect(try Self.problems("[bridge]\nlease_ttl = \"1s\"\n" + account).contains("bridge.lease_ttl: must be from 3s to 10m"))
        #expect(try Self.problems("[bridge]\nlease_ttl = \"soon\"\n" + account).contains { $0.hasPrefix("bridge.lease_ttl: 'soon' is not a period") })
    }

    @Test("max_concurrent_logins bounds the login queue: 64 by default, 1 to 10,000")
    func concurrentLogins() throws {
        let account = "[accounts.work]\njid = \"bridge@work.example\"\npassword_env = \"X\"\n"
        var loader = ConfigurationLoader(file: try Self.write("[bridge]\nmax_concurrent_logins = 8\n" + account), environment: ["X": "pw"])
        #expect(try loader.loadBridge().settings.maxConcurrentLogins == 8)
        var defaults = ConfigurationLoader(file: try Self.write(account), environment: ["X": "pw"])
        #expect(try defaults.loadBridge().settings.maxConcurrentLogins == 64)
        #expect(try Self.problems("[bridge]\nmax_concurrent_logins = 0\n" + account).contains { $0.hasPrefix("bridge.max_concurrent_logins") })
    }

    @Test("a broken file reports every problem with its TOML path")
    func everyProblem() throws {
        let problems = try Self.problems(
            """
            stray = 1
            [accounts.work]
            jid = "alice@example.test"
            password_file = "missing.pw"
            port = 70000
            tls = "nonsense"
            insecure = "yes"
            bogus = 1
            [accounts.bad]
            jid = "not a jid@@"
            [accounts.domain]
            jid = "example.test"
            password_env = "X"
            password_command = "true"
            subscription_policy = "always"
            """
        )
        #expect(
            problems == [
                "stray: unknown key",
                "accounts.bad.jid: 'not a jid@@' is not a valid JID: invalid JID: U+0020 is not allowed in the localpart",
                "accounts.bad: has no password source",
                "accounts.domain.jid: 'example.test' has no localpart",
                "accounts.domain: has more than one password source",
                "accounts.domain.subscription_policy: unknown policy 'always'",
                "accounts.work.bogus: unknown key",
                "accounts.work.password_file: cannot read \(problemsDirectory(problems))/missing.pw",
                "accounts.work.port: must be a whole number from 1 to 65535",
                "accounts.work.tls: unknown TLS mode 'nonsense'",
                "accounts.work.insecure: must be true or false",
            ]
        )
    }

    @Test("catch_up and catch_up_max_age: defaults mam and 7 days; off, periods and unlimited read; anything else is a problem")
    func catchUp() throws {
        func account(_ extra: String) throws -> AccountConfiguration? {
            var loader = ConfigurationLoader(file: try Self.write("[accounts.a]\njid = \"a@example.test\"\npassword_env = \"X\"\n\(extra)\n"))
            return try loader.load()["a"]
        }
        let defaults = try #require(try account(""))
        #expect(defaults.catchUp && defaults.catchUpMaxAge == .seconds(7 * 86_400))
        let off = try #require(try account("catch_up = \"off\"\ncatch_up_max_age = \"12h\""))
        #expect(!off.catchUp && off.catchUpMaxAge == .seconds(12 * 3_600))
        #expect(try account("catch_up_max_age = \"unlimited\"")?.catchUpMaxAge == nil)
        #expect(try account("catch_up_max_age = \"90s\"")?.catchUpMaxAge == .seconds(90))
        let problems = try Self.problems("[accounts.a]\njid = \"a@example.test\"\npassword_env = \"X\"\ncatch_up = \"always\"\ncatch_up_max_age = \"7 days\"\n")
        #expect(problems == ["accounts.a.catch_up: unknown catch-up 'always'", "accounts.a.catch_up_max_age: '7 days' is not a period"])
        #expect(try Self.problems("[accounts.a]\njid = \"a@example.test\"\npassword_env = \"X\"\ncatch_up_max_age = \"0d\"\n").count == 1)
    }

    @Test("ack_timeout: default 5 s; periods read, \"unlimited\" turns the watchdog off, anything else is a problem; the <r/> pacing stays under a quarter of it")
    func acknowledgementTimeout() throws {
        func account(_ extra: String) throws -> AccountConfiguration? {
            var loader = ConfigurationLoader(file: try Self.write("[accounts.a]\njid = \"a@example.test\"\npassword_env = \"X\"\n\(extra)\n"))
            return try loader.load()["a"]
        }
        #expect(try account("")?.acknowledgementTimeout == .seconds(5))
        #expect(try account("ack_timeout = \"20s\"")?.acknowledgementTimeout == .seconds(20))
        #expect(try account("ack_timeout = \"unlimited\"")?.acknowledgementTimeout == .zero)
        let problems = try Self.problems("[accounts.a]\njid = \"a@example.test\"\npassword_env = \"X\"\nack_timeout = \"soon\"\n")
        #expect(problems == ["accounts.a.ack_timeout: 'soon' is not a period"])
        #expect(TransportFactory.steadyDelay(deliveryTimeout: .seconds(30), acknowledgementTimeout: .seconds(5)) == .seconds(1))
        #expect(TransportFactory.steadyDelay(deliveryTimeout: .seconds(30), acknowledgementTimeout: .seconds(2)) == .milliseconds(500))
        #expect(TransportFactory.steadyDelay(deliveryTimeout: .seconds(2), acknowledgementTimeout: .zero) == .milliseconds(500))
    }

    @Test("receipts default on for a 1:1 link only; reupload reads its limit, and a bad limit is a problem")
    func richMessageKeys() throws {
        let accounts = """
            [accounts.work]
            jid = "bridge@work.example"
            password_env = "P"
            [accounts.home]
            jid = "bridge@home.example"
            password_env = "P"
            [local.ops]
            kind = "socket"
            path = "ops.sock"

            """
        func channels(_ text: String) throws -> [RelayChannel] {
            var loader = ConfigurationLoader(file: try Self.write(accounts + text))
            return try loader.loadBridge().channels
        }
        let link = """
            members = [{ account = "work", jid = "a@x.example" }, { account = "home", jid = "b@y.example" }]
            """
        #expect(try channels("[channels.c]\n" + link).first?.passesReceipts == true)
        #expect(try channels("[channels.c]\nreceipts = false\n" + link).first?.passesReceipts == false)
        let three = "[channels.c]\nmembers = [{ account = \"work\", jid = \"a@x.example\" }, { account = \"home\", jid = \"b@y.example\" }, { local = \"ops\" }]\n"
        #expect(try channels(three).first?.passesReceipts == false)
        #expect(try channels("[channels.c]\nreupload = true\n" + link).first?.reuploadMaxBytes == RelayChannel.defaultReuploadMaxBytes)
        #expect(try channels("[channels.c]\nreupload = true\nreupload_max_bytes = 1000\n" + link).first?.reuploadMaxBytes == 1000)
        #expect(try channels("[channels.c]\nreupload_max_bytes = 1000\n" + link).first?.reuploadMaxBytes == nil)
        #expect(try Self.problems(accounts + "[channels.c]\nreupload = true\nreupload_max_bytes = 0\n" + link) == [
            "channels.c.reupload_max_bytes: must be a whole number from 1 to 1099511627776"
        ])
    }

    @Test("invalid TOML names the line")
    func invalidTOML() throws {
        let problems = try Self.problems("[accounts.work\njid = 1\n")
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("(line 1, column") == true)
    }

    @Test("a missing file is one clear problem")
    func missingFile() {
        var loader = ConfigurationLoader(file: "/nonexistent/bridge.toml")
        #expect(throws: ConfigurationError.self) { _ = try loader.load() }
    }

    @Test("wrong value types are named")
    func types() throws {
        let problems = try Self.problems("[accounts.a]\njid = 5\npassword_env = \"X\"\nhost = true\n")
        #expect(problems == ["accounts.a.jid: must be a string", "accounts.a.jid: is missing", "accounts.a.host: must be a string"])
    }
}

/// The temporary folder a problem list refers to (taken from its password_file entry).
private func problemsDirectory(_ problems: [String]) -> String {
    guard let line = problems.first(where: { $0.contains("cannot read ") }),
        let range = line.range(of: "cannot read ")
    else { return "" }
    return URL(fileURLWithPath: String(line[range.upperBound...])).deletingLastPathComponent().path
}
