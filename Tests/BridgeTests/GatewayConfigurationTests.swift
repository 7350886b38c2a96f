import Foundation
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeState

/// `[gateway.NAME]` (issue 23): every problem with its TOML path, and registered users
/// merged in as accounts.
@Suite("Gateway configuration")
struct GatewayConfigurationTests {
    static let account = "[accounts.home]\njid = \"home@home.example\"\npassword_env = \"X\"\nhost = \"127.0.0.1\"\nport = 5299\n\n"

    static func load(_ text: String) throws -> BridgeConfiguration {
        var loader = ConfigurationLoader(file: try ConfigurationLoaderTests.write(Self.account + text))
        return try loader.loadBridge()
    }

    @Test("a minimal gateway: defaults for host, port, registration and keepalive")
    func minimal() throws {
        let configuration = try Self.load("[gateway.home]\ncomponent = \"gw.work.example\"\nsecret_env = \"S\"\n")
        let gateway = try #require(configuration.gateways["home"])
        #expect(gateway.host == "127.0.0.1" && gateway.port == 5347 && gateway.registration == .allowlist && gateway.keepalive == .seconds(60) && gateway.users.isEmpty)
        #expect(gateway.displayName == nil)
        #expect(gateway.serverDomain == "work.example", "the component domain's parent")
        #expect(GatewayConfiguration.parentDomain(of: "gw.example") == "gw.example", "no parent to take")
        let other = try Self.load("[gateway.home]\ncomponent = \"gw.elsewhere.example\"\nsecret_env = \"S\"\nserver_domain = \"work.example\"\nmax_stanza_bytes = 8192\n")
        #expect(other.gateways["home"]?.serverDomain == "work.example" && other.gateways["home"]?.maxStanzaBytes == 8192)
    }

    @Test("problems, each with its path", arguments: [
        ("[gateway.home]\nsecret_env = \"S\"\n", "gateway.home.component: is missing"),
        ("[gateway.home]\ncomponent = \"user@gw.example\"\nsecret_env = \"S\"\n", "gateway.home.component: 'user@gw.example' is not a domain"),
        ("[gateway.home]\ncomponent = \"gw.example\"\n", "gateway.home: has no secret"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nsecret_file = \"s\"\n", "gateway.home: has more than one secret source"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nhost = \"192.0.2.1\"\n", "gateway.home.host: 192.0.2.1 is not a loopback address, and a component link has no TLS"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nport = 70000\n", "gateway.home.port: must be a whole number from 1 to 65535"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nregistration = \"sometimes\"\n", "gateway.home.registration: unknown registration policy 'sometimes'"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nregistration = \"allowlist\"\n", "gateway.home.allow: is empty, so nobody may register"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nallow = [1]\n", "gateway.home.allow: must be an array of JID patterns"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\ncolour = \"red\"\n", "gateway.home.colour: unknown key"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\n[[gateway.home.user]]\njid = \"alice@work.example\"\naccount = \"nope\"\n", "gateway.home.user[0].account: no [accounts.nope]"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\n[[gateway.home.user]]\njid = \"alice@work.example/phone\"\naccount = \"home\"\n", "gateway.home.user[0].jid: 'alice@work.example/phone' is not a bare JID"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\n[[gateway.home.user]]\naccount = \"home\"\n", "gateway.home.user[0].jid: is missing"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\n[[gateway.home.user]]\njid = \"a@w.example\"\naccount = \"home\"\n[[gateway.home.user]]\njid = \"A@w.example\"\naccount = \"home\"\n", "gateway.home.user[1].jid: a@w.example is linked twice"),
        ("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nserver_domain = \"a@b\"\n", "gateway.home.server_domain: 'a@b' is not a domain"),
        ("[gateway.a]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\n[gateway.b]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\n", "gateway.b.component: gw.example is also gateway.a's"),
    ])
    func problems(text: String, expected: String) throws {
        let problems = try ConfigurationLoaderTests.problems(Self.account + text)
        #expect(problems.contains { $0.hasPrefix(expected) }, "\(problems)")
    }

    @Test("allow_remote lets a non-loopback host through")
    func remote() throws {
        let configuration = try Self.load("[gateway.home]\ncomponent = \"gw.example\"\nsecret_env = \"S\"\nhost = \"192.0.2.1\"\nallow_remote = true\n")
        #expect(configuration.gateways["home"]?.allowRemote == true)
    }

    @Test("registrations join as accounts named gateway+user, connecting like a configured account on the same domain; users linked in the file win; unknown gateways are skipped")
    func registrationsMerged() throws {
        let configuration = try Self.load("[gateway.home]\ncomponent = \"gw.work.example\"\nsecret_env = \"S\"\n[[gateway.home.user]]\njid = \"alice@work.example\"\naccount = \"home\"\n")
        let now = Date()
        let merged = configuration.merging(registrations: [
            GatewayRegistrationRecord(gateway: "home", user: "dave@work.example", address: "erin@home.example", password: "pw", registeredAt: now),
            GatewayRegistrationRecord(gateway: "home", user: "alice@work.example", address: "other@home.example", password: "pw", registeredAt: now),
            GatewayRegistrationRecord(gateway: "gone", user: "x@work.example", address: "y@z.example", password: "pw", registeredAt: now),
            GatewayRegistrationRecord(gateway: "home", user: "fred@work.example", address: "fred@elsewhere.example", password: "pw", registeredAt: now),
        ])
        let dave = try #require(merged.accounts["home+dave@work.example"])
        #expect(dave.client.jid.description == "erin@home.example/bridge")
        #expect(dave.client.host == "127.0.0.1" && dave.client.port == 5299, "like accounts.home on the same domain")
        #expect(dave.password == .registered("pw") && "\(dave.password)" == "password given at registration")
        let fred = try #require(merged.accounts["home+fred@work.example"])
        #expect(fred.client.host == nil && fred.client.port == nil, "another domain: SRV")
        #expect(merged.accounts["home+alice@work.example"] == nil)
        #expect(merged.gateways["home"]?.users.map(\.jid) == ["alice@work.example", "dave@work.example", "fred@work.example"])
        #expect(merged.gateways["home"]?.users.map(\.configured) == [true, false, false])
        #expect(merged.accounts.count == 3)
        #expect(BridgeRuntime.gatewayLinks(merged).map(\.account) == ["home", "home+dave@work.example", "home+fred@work.example"])
    }
}
