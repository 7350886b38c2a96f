import Foundation
import Testing

@testable import Bridge
@testable import BridgeFeatures

/// Presence and roster-mirror settings in `bridge.toml`.
@Suite("Configuration: presence and mirrors")
struct ConfigurationMirrorsTests {
    static let accounts = """
        [accounts.work]
        jid = "bridge@work.example"
        password_env = "W"
        [accounts.home]
        jid = "bridge@home.example"
        password_env = "H"

        """

    static func load(_ text: String) throws -> Result<BridgeConfiguration, ConfigurationError> {
        let path = try ConfigurationLoaderTests.write(Self.accounts + text)
        var loader = ConfigurationLoader(file: path)
        do {
            return .success(try loader.loadBridge())
        } catch {
            return .failure(error)
        }
    }

    static func problems(_ text: String) throws -> [String] {
        guard case .failure(let error) = try Self.load(text) else { return [] }
        return error.problems.map { "\($0.path): \($0.message)" }
    }

    @Test("presence defaults to on for a 1:1 account link and off otherwise; the key overrides")
    func presenceDefaults() throws {
        let text = """
            [local.ops]
            kind = "socket"
            path = "ops.sock"
            [channels.link]
            members = [ { account = "work", jid = "alice@work.example" }, { account = "home", jid = "bob@home.example" } ]
            [channels.group]
            members = [ { account = "work", jid = "alice@work.example" }, { account = "home", jid = "bob@home.example" }, { local = "ops" } ]
            [channels.quiet]
            presence = false
            members = [ { account = "work", jid = "carol@work.example" }, { account = "home", jid = "dave@home.example" } ]
            [channels.loud]
            presence = true
            members = [ { account = "work", jid = "erin@work.example" }, { local = "ops", direction = "out" } ]
            [bridge]
            presence_interval_ms = 250
            """
        guard case .success(let configuration) = try Self.load(text) else {
            Issue.record("did not load: \(try Self.problems(text))")
            return
        }
        #expect(configuration.presenceChannels == ["link", "loud"])
        #expect(configuration.settings.presenceIntervalMilliseconds == 250)
    }

    @Test("mirrors load with their options")
    func mirrors() throws {
        let text = """
            [[presence_mirror]]
            from = "work"
            to = "home"
            [[roster_mirror]]
            from = "work"
            to = "home"
            groups = ["Friends", "Work"]
            two_way = true
            subscribe = true
            """
        guard case .success(let configuration) = try Self.load(text) else {
            Issue.record("did not load: \(try Self.problems(text))")
            return
        }
        #expect(configuration.presenceMirrors == [PresenceMirrorConfiguration(from: "work", to: "home")])
        #expect(configuration.rosterMirrors == [RosterMirrorConfiguration(from: "work", to: "home", groups: ["Friends", "Work"], twoWay: true, subscribe: true)])
        #expect(configuration.rosterMirrors.first?.id == "work->home")
    }

    @Test("broken mirrors name their path")
    func brokenMirrors() throws {
        let problems = try Self.problems(
            """
            [[presence_mirror]]
            from = "work"
            to = "nowhere"
            [[presence_mirror]]
            from = "home"
            to = "home"
            [[roster_mirror]]
            from = "work"
            to = "home"
            groups = "Friends"
            color = "red"
            [[roster_mirror]]
            from = "home"
            to = "work"
            [bridge]
            presence_interval_ms = -5
            """
        )
        #expect(
            problems == [
                "bridge.presence_interval_ms: must be a whole number from 0 to 600000",
                "presence_mirror[0].to: unknown account 'nowhere'",
                "presence_mirror[1]: from and to are the same account",
                "roster_mirror[0].color: unknown key",
                "roster_mirror[0].groups: must be an array of group names",
                "roster_mirror[1]: mirrors home and work again",
            ]
        )
    }
}
