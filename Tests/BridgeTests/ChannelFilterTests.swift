import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRouting
@testable import BridgeCommand

/// Channel filters (issue 25): `ignore`, `replace` and `only_from` through the pure
/// router, and their configuration with every problem at its TOML path.
@Suite("Channel filters")
struct ChannelFilterTests {
    static let alice = Endpoint(transport: "work", address: "alice@work.example")
    static let ops = Endpoint(transport: "work", address: "Pager@OPS.example")
    static let out = Endpoint(transport: "console")
    static let room = Endpoint(transport: "work", address: "dev@muc.work.example")

    static func router(_ filter: ChannelFilter) -> Router {
        var members = [alice, ops, Endpoint(transport: "work", address: "mallory@evil.example"), out]
            .map { ChannelMember(endpoint: $0, direction: .inout) }
        members.append(ChannelMember(endpoint: Self.room, direction: .inout, room: RoomMembership(nick: "bridge")))
        return Router(channels: [RelayChannel(name: "alerts", members: members, format: "{body}")], ownJIDs: [], filters: ["alerts": filter])
    }

    static func route(_ router: Router, _ body: String, from source: Endpoint = alice, nick: String = "alice") -> RoutingDecision {
        var next = 0
        let message = InboundMessage(source: source, sender: "\(source.address ?? source.transport)/x", nick: nick, id: "m", body: body)
        return router.route(message) {
            next += 1
            return "r\(next)"
        }
    }

    @Test("ignore drops a matching body with the reason filtered; others pass")
    func ignore() throws {
        var filter = ChannelFilter()
        filter.ignore = [try .init("^DEBUG "), try .init("healthcheck ok$")]
        let router = Self.router(filter)
        #expect(Self.route(router, "DEBUG cache warm") == .drop(reason: .filtered))
        #expect(Self.route(router, "db1 healthcheck ok") == .drop(reason: .filtered))
        guard case .deliver(let deliveries) = Self.route(router, "disk full") else { Issue.record("dropped"); return }
        #expect(deliveries.count == 4)
    }

    @Test("replace rewrites the text every target gets, in order")
    func replace() throws {
        var filter = ChannelFilter()
        filter.replace = [(try .init("(?i)password=\\S+"), "password=***"), (try .init("\\*\\*\\*"), "[hidden]")]
        guard case .deliver(let deliveries) = Self.route(Self.router(filter), "login with PASSWORD=hunter2 now") else { Issue.record("dropped"); return }
        #expect(Set(deliveries.map(\.body)) == ["login with password=[hidden] now"])
    }

    @Test("only_from: bare-JID globs (case-insensitive) for contacts, nick:NAME for room occupants and locals only; anyone else is filtered")
    func onlyFrom() {
        var filter = ChannelFilter()
        filter.onlyFrom = [.init("alice@work.example"), .init("*@ops.example"), .init("nick:bob")]
        let router = Self.router(filter)
        let mallory = Endpoint(transport: "work", address: "mallory@evil.example")
        #expect(Self.route(router, "a", from: Self.alice) != .drop(reason: .filtered))
        #expect(Self.route(router, "b", from: Self.ops) != .drop(reason: .filtered))
        #expect(Self.route(router, "c", from: mallory) == .drop(reason: .filtered))
        // A contact's nick is its roster name or localpart: anyone could be "bob" there.
        #expect(Self.route(router, "d", from: mallory, nick: "bob") == .drop(reason: .filtered))
        // In a room the address is the room's; the occupant's nick is what identifies them.
        #expect(Self.route(router, "e", from: Self.room, nick: "bob") != .drop(reason: .filtered))
        #expect(Self.route(router, "f", from: Self.room, nick: "eve") == .drop(reason: .filtered))
        #expect(Self.route(router, "g", from: Self.out, nick: "bob") != .drop(reason: .filtered))
        #expect(ChannelFilter.AllowedSender.glob("a?c*@x.*", matches: "abcdef@x.org"))
        #expect(!ChannelFilter.AllowedSender.glob("*@ops.example", matches: "a@ops.example.evil"))
        #expect(ChannelFilter.AllowedSender.glob("*b", matches: "*ab"))
    }

    @Test("configuration: every key read; an invalid expression, a bad rule and a bad list are problems at their paths")
    func configuration() throws {
        let channel = { (keys: String) in
            HTTPConfigurationTests.account + """
                [channels.alerts]
                members = [ { account = "work", jid = "alice@work.example" }, { account = "work", jid = "bob@work.example" } ]
                \(keys)

                """
        }
        let (configuration, _) = try HTTPConfigurationTests.load(channel(#"""
            ignore = ["^DEBUG "]
            replace = [ { match = '(?i)password=\S+', with = "password=***" } ]
            only_from = ["*@work.example", "nick:bob"]
            """#))
        let filter = try #require(configuration.filters["alerts"])
        #expect(filter.ignore.map(\.source) == ["^DEBUG "])
        #expect(filter.replace.map(\.pattern.source) == [#"(?i)password=\S+"#])
        #expect(filter.onlyFrom == [.jid("*@work.example"), .nick("bob")])
        let (problems, _) = try HTTPConfigurationTests.problems(channel(#"""
            ignore = ["(unclosed", ""]
            replace = [ { match = "[z-a]", with = "x" }, { match = "x" } ]
            only_from = "alice"
            """#))
        let (more, _) = try HTTPConfigurationTests.problems(channel(#"""
            replace = [ { match = "(a)", with = "$2" } ]
            only_from = ["nick:"]
            """#))
        #expect(more.contains("channels.alerts.replace[0].with: names group $2, but match has 1"), "\(more)")
        #expect(more.contains("channels.alerts.only_from[0]: names no nick"), "\(more)")
        let (empty, _) = try HTTPConfigurationTests.problems(channel("only_from = []"))
        #expect(empty == ["channels.alerts.only_from: is empty: nobody could relay"])
        #expect(ConfigurationLoader.groupReferences(#"a $1 b \$2 $10"#) == [1, 10])
        #expect(problems.contains { $0.hasPrefix("channels.alerts.ignore[0]: '(unclosed' is not a valid regular expression") }, "\(problems)")
        #expect(problems.contains("channels.alerts.ignore[1]: must be a non-empty string"), "\(problems)")
        #expect(problems.contains { $0.hasPrefix("channels.alerts.replace[0].match: '[z-a]' is not a valid regular expression") }, "\(problems)")
        #expect(problems.contains("channels.alerts.replace[1]: must be a table with match and with (strings)"), "\(problems)")
        #expect(problems.contains("channels.alerts.only_from: must be an array of strings"), "\(problems)")
        // `check` reports it and exits 2.
        let broken = try HTTPConfigurationTests.write(channel(#"ignore = ["(unclosed"]"#))
        #expect(throws: ExitStatus.configuration.exitCode) { try CheckCommand.parse(["--config", broken]).run() }
    }
}
