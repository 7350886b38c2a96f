import Foundation
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeRelay

/// The paging keys of `[channels.NAME]` and the member key `quiet` (issue 24): each read,
/// each problem reported by its TOML path.
@Suite("Paging configuration")
struct PagingConfigurationTests {
    static func channel(_ keys: String, alice: String = "") -> String {
        HTTPConfigurationTests.account + """
            [local.web]
            kind = "http"
            listen = "127.0.0.1:8080"

            [channels.oncall]
            members = [
              { local = "web" },
              { account = "work", jid = "alice@work.example", direction = "out"\(alice) },
            ]
            \(keys)

            """
    }

    @Test("every key read: Alertmanager URL, ack, repeat, tiers, minimum priority, flood limit, window, severities, quiet hours")
    func everyKey() throws {
        let (configuration, _) = try HTTPConfigurationTests.load(
            Self.channel(
                """
                alertmanager_url = "http://127.0.0.1:9093/"
                ack = ["reply", "displayed"]
                repeat = "10m"
                escalate = [ { after = "5m", to = [ { account = "work", jid = "Bob@work.example" } ] }, { after = "15m", to = [ { account = "work", jid = "carol@work.example" } ] } ]
                escalate_min_priority = 3
                max_per_minute = 20
                dedupe_window = "2m"
                severity_priority = { critical = 5, page = 4 }
                """,
                alice: #", quiet = { hours = "22:00-07:00", tz = "Europe/Berlin", min_priority = 4 }"#
            )
        )
        let policy = try #require(configuration.paging["oncall"])
        #expect(policy.isPaging)
        #expect(policy.alertmanagerURL == "http://127.0.0.1:9093")
        #expect(policy.ackKinds == [.reply, .displayed])
        #expect(policy.repeatInterval == .seconds(600))
        #expect(policy.tiers == [
            PagingPolicy.Tier(after: .seconds(300), to: [Endpoint(transport: "work", address: "bob@work.example")]),
            PagingPolicy.Tier(after: .seconds(900), to: [Endpoint(transport: "work", address: "carol@work.example")]),
        ])
        #expect(policy.escalationMinimumPriority == 3)
        #expect(policy.maxPerMinute == 20)
        #expect(policy.dedupeWindow == .seconds(120))
        #expect(policy.severityPriority == ["critical": 5, "page": 4])
        let quiet = try #require(policy.quiet[Endpoint(transport: "work", address: "alice@work.example")])
        #expect(quiet.start == 22 * 60 && quiet.end == 7 * 60 && quiet.minimumPriority == 4 && quiet.timeZone.identifier == "Europe/Berlin")
    }

    @Test("without paging keys a channel does not page, and has the defaults: 5 min window, critical 5 / warning 3 / info 2")
    func defaults() throws {
        let (configuration, _) = try HTTPConfigurationTests.load(Self.channel(""))
        let policy = try #require(configuration.paging["oncall"])
        #expect(!policy.isPaging && policy.ackKinds == [.reply, .reaction] && policy.tiers.isEmpty && policy.repeatInterval == nil)
        #expect(policy.dedupeWindow == .seconds(300) && policy.severityPriority == ["critical": 5, "warning": 3, "info": 2] && policy.maxPerMinute == nil)
        #expect(policy.escalationMinimumPriority == 4 && policy.quiet.isEmpty)
    }

    @Test("bad values are problems at their TOML paths")
    func problems() throws {
        let (problems, _) = try HTTPConfigurationTests.problems(
            Self.channel(
                """
                alertmanager_url = "ftp://x"
                ack = ["reply", "wave"]
                repeat = "soon"
                escalate = [ { after = "5m", to = [ { account = "nope", jid = "bob@work.example" }, { account = "work", jid = "bob@work.example/phone" } ] }, { to = [] } ]
                escalate_min_priority = 9
                max_per_minute = 0
                dedupe_window = "2d"
                severity_priority = { critical = 7 }
                """,
                alice: #", quiet = { hours = "late", tz = "Mars/Olympus" }"#
            )
        )
        for expected in [
            "channels.oncall.alertmanager_url: 'ftp://x' is not an http(s) URL",
            "channels.oncall.ack[1]: is not a way to acknowledge",
            "channels.oncall.repeat: 'soon' is not a period",
            "channels.oncall.escalate[0].to[0].account: no account 'nope'",
            "channels.oncall.escalate[0].to[1].jid: 'bob@work.example/phone' is not a bare JID",
            "channels.oncall.escalate[1].after: is missing",
            "channels.oncall.escalate_min_priority: must be a whole number from 1 to 5",
            "channels.oncall.max_per_minute: must be a whole number from 1 to 100000",
            "channels.oncall.dedupe_window: is longer than a day",
            "channels.oncall.severity_priority.critical: must be a whole number from 1 to 5",
            "channels.oncall.members[1].quiet.hours: 'late' is not a span of hours",
        ] {
            #expect(problems.contains { $0.hasPrefix(expected) }, "\(expected) not in \(problems)")
        }
        let (zone, _) = try HTTPConfigurationTests.problems(Self.channel("", alice: #", quiet = { hours = "22:00-07:00", tz = "Mars/Olympus" }"#))
        #expect(zone == ["channels.oncall.members[1].quiet.tz: unknown time zone 'Mars/Olympus'"])
        let (local, _) = try HTTPConfigurationTests.problems(Self.channel("").replacingOccurrences(of: #"{ local = "web" }"#, with: #"{ local = "web", quiet = { hours = "22:00-07:00" } }"#))
        #expect(local == ["channels.oncall.members[0].quiet: applies only to a contact member"])
    }
}
