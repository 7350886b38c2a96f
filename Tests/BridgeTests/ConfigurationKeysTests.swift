import BridgeFeatures
import Foundation
import Testing

@testable import Bridge

/// `bridge.toml.example` shows every key the loader accepts and no other, table by table
/// (issue 42): the bridge.toml(5) manual page is made from the example
/// (`scripts/bridge-toml-manual.py`), so through this test it names what `check` knows.
@Suite("Configuration keys: the example and the loader")
struct ConfigurationKeysTests {
    /// The keys the example sets, or shows commented out ("#key = value", "# key = value"),
    /// under each table header, by the header's kind ("accounts" for `[accounts.work]`,
    /// "gateway.user" for `[[gateway.home.user]]`); and every key of an inline table
    /// (`{ account = "work", jid = … }`), commented out or not.
    struct ExampleKeys {
        var tables: [String: Set<String>] = [:]
        var inline: Set<String> = []
    }

    static func exampleKeys(_ text: String) -> ExampleKeys {
        var keys = ExampleKeys()
        var kind: String?
        let header = /^\[\[?([A-Za-z0-9_.-]+)\]\]?\s*$/
        let key = /^([a-z0-9_]+)\s*=/
        let commentedKey = /^#\s?([a-z0-9_]+) = (?:["'\[{0-9]|true|false)/
        let inlineTable = /\{([^{}]*)/
        let inlineKey = /([a-z0-9_]+)\s*=/
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let match = line.wholeMatch(of: header) {
                let names = match.1.split(separator: ".")
                kind = names.count == 3 ? "\(names[0]).\(names[2])" : String(names[0])
                keys.tables[kind!, default: []] = keys.tables[kind!] ?? []
                // `[[gateway.home.user]]` is the key `user` of `[gateway.home]`.
                if names.count == 3 { keys.tables[String(names[0]), default: []].insert(String(names[2])) }
                continue
            }
            if let kind, let match = line.prefixMatch(of: key) ?? line.prefixMatch(of: commentedKey) {
                keys.tables[kind, default: []].insert(String(match.1))
            }
            for table in line.matches(of: inlineTable) {
                for name in table.1.matches(of: inlineKey) { keys.inline.insert(String(name.1)) }
            }
        }
        return keys
    }

    /// Each kind's keys in the example are exactly those the loader accepts for it.
    static func expectSame(_ shown: [String: Set<String>], as loader: [String: [String]], sourceLocation: SourceLocation = #_sourceLocation) {
        for (kind, accepted) in loader.sorted(by: { $0.key < $1.key }) {
            let missing = Set(accepted).subtracting(shown[kind] ?? []), unknown = (shown[kind] ?? []).subtracting(accepted)
            #expect(missing.isEmpty, "\(kind): not in the example: \(missing.sorted())", sourceLocation: sourceLocation)
            #expect(unknown.isEmpty, "\(kind): in the example, unknown to the loader: \(unknown.sorted())", sourceLocation: sourceLocation)
        }
    }

    static func example() throws -> String {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../bridge.toml.example").path
        return try String(contentsOfFile: file, encoding: .utf8)
    }

    @Test("every table kind of the loader is in the example, with exactly the keys the loader accepts")
    func tables() throws {
        let keys = Self.exampleKeys(try Self.example())
        let loader: [String: [String]] = [
            "bridge": BridgeSettings.keys, "accounts": AccountConfiguration.keys, "local": LocalConfiguration.keys,
            "channels": ConfigurationLoader.channelKeys, "presence_mirror": PresenceMirrorConfiguration.keys,
            "roster_mirror": RosterMirrorConfiguration.keys, "gateway": GatewayConfiguration.keys, "gateway.user": GatewayConfiguration.userKeys,
        ]
        #expect(Set(ConfigurationLoader.sections) == Set(loader.keys.filter { !$0.contains(".") }), "a top-level table the test does not know")
        #expect(Set(keys.tables.keys) == Set(loader.keys))
        Self.expectSame(keys.tables, as: loader)
    }

    /// The keys of every inline table in the example, by the key that holds it: "members"
    /// for a channel member, "quiet" for quiet hours, "escalate" for a tier, "to" for a
    /// tier's person, "replace" for a rule. Tables in a multi-line array count also when
    /// commented out (`# or …: { … }`); prose elsewhere does not.
    static func inlineKeys(_ text: String) -> [String: Set<String>] {
        var reader = InlineTableReader()
        var array: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let open = line.wholeMatch(of: /([a-z0-9_]+)\s*=\s*\[\s*/) {
                array = String(open.1)
                continue
            }
            if line.hasPrefix("]") {
                array = nil
                continue
            }
            if let array {
                if let brace = line.firstIndex(of: "{") { reader.read(line[brace...], holder: array) }
            } else if !line.hasPrefix("#"), let pair = line.wholeMatch(of: /([a-z0-9_]+)\s*=\s*(.*)/) {
                reader.read(pair.2, holder: String(pair.1))
            }
        }
        return reader.keys
    }

    @Test("a member, quiet hours, an escalation tier, its person and a replace rule each show exactly the keys the loader accepts")
    func inlineTables() throws {
        let keys = Self.inlineKeys(try Self.example())
        let loader: [String: [String]] = [
            "members": ConfigurationLoader.memberKeys, "quiet": ConfigurationLoader.quietKeys, "escalate": ConfigurationLoader.tierKeys,
            "to": ConfigurationLoader.personKeys, "replace": ConfigurationLoader.ruleKeys,
        ]
        Self.expectSame(keys, as: loader)
    }

    @Test("the README's first bridge.toml (two accounts and a FIFO in one channel) loads without a problem")
    func readmeExample() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../README.md").path
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        let block = try #require(text.firstMatch(of: /```toml\n([\s\S]*?)```/)?.1)
        let file = try ConfigurationLoaderTests.write(String(block), files: ["work.password": "a\n", "home.password": "b\n"])
        var loader = ConfigurationLoader(file: file)
        let configuration = try loader.loadBridge()
        #expect(configuration.accounts.keys.sorted() == ["home", "work"])
        #expect(configuration.locals.mapValues(\.kind) == ["alerts": .fifo])
        #expect(configuration.channels.map { $0.members.map(\.endpoint.description) } == [["alerts", "work:alice@work.example", "home:bob@home.example"]])
    }

    @Test("the readers find keys set, keys commented out and inline keys by their holder, and skip prose")
    func reader() {
        let text = """
            # prose with target_session_attrs=read-write and a key = "in the middle"
            [bridge]
            state = "a"
            #lease_ttl = "10s"
            # instance = "node-a"
            # token_file names a file
            [accounts.work]
            jid = "a@b"
            [channels.c]
            members = [
              { account = "work", jid = "x@y", quiet = { hours = "1-2" } },
              # { local = "ops", direction = "in" },
            ]
            [[gateway.home.user]]
            account = "home"
            """
        let inline = Self.inlineKeys(text + "\nescalate = [ { after = \"5m\", to = [ { account = \"w\", jid = \"b@w\" } ] } ]\n")
        #expect(inline == ["members": ["account", "jid", "quiet", "local", "direction"], "quiet": ["hours"], "escalate": ["after", "to"], "to": ["account", "jid"]])
        let keys = Self.exampleKeys(text)
        #expect(keys.tables == ["bridge": ["state", "lease_ttl", "instance"], "accounts": ["jid"], "channels": ["members"], "gateway": ["user"], "gateway.user": ["account"]])
        #expect(keys.inline == ["account", "jid", "quiet", "hours", "local", "direction"])
    }
}
