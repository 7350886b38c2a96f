import Foundation
import Testing

@testable import Bridge
@testable import BridgeCommand

/// `check`'s warnings for what is valid but will surprise (issue 11: phone-safe defaults):
/// a channel that sends headlines to XMPP contacts, which offline phones never get.
@Suite("check warnings")
struct CheckWarningsTests {
    static func warnings(_ channels: String) throws -> [String] {
        let file = try ConfigurationLoaderTests.write(BridgeConfigurationTests.base + "\n" + channels)
        var loader = ConfigurationLoader(file: file)
        return CheckCommand.warnings(try loader.loadBridge())
    }

    @Test("headline to an XMPP contact: warned, naming the channel; chat, rooms and input-only contacts: not")
    func headlines() throws {
        let warned = try Self.warnings("[channels.alerts]\ntype = \"headline\"\nmembers = [ { local = \"ops\", direction = \"in\" }, { account = \"work\", jid = \"alice@work.example\" } ]")
        #expect(warned.count == 1)
        #expect(warned.first?.hasPrefix("channels.alerts: type = \"headline\" to XMPP contacts: offline phones will not get these") == true, "\(warned)")
        #expect(try Self.warnings("[channels.alerts]\nmembers = [ { local = \"ops\", direction = \"in\" }, { account = \"work\", jid = \"alice@work.example\" } ]").isEmpty)
        #expect(try Self.warnings("[channels.alerts]\ntype = \"headline\"\nmembers = [ { local = \"ops\", direction = \"out\" }, { account = \"work\", jid = \"alice@work.example\", direction = \"in\" } ]").isEmpty)
        #expect(try Self.warnings("[channels.alerts]\ntype = \"headline\"\nmembers = [ { local = \"ops\", direction = \"in\" }, { account = \"work\", room = \"dev@muc.work.example\" } ]").isEmpty)
    }
}
