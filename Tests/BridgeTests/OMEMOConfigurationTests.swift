import AccountTransport
import Foundation
import Testing

@testable import Bridge

/// `omemo`, `omemo_trust` and a member's `encryption` (issue 41): defaults, the strictest of
/// a contact's memberships, and what `check` refuses.
@Suite("OMEMO configuration")
struct OMEMOConfigurationTests {
    static func file(omemo: String, members: String) -> String {
        """
        [accounts.home]
        jid = "bot@example.org"
        password_env = "PW"
        \(omemo)

        [accounts.work]
        jid = "work@example.org"
        password_env = "PW"

        [local.ops]
        kind = "socket"
        path = "ops.sock"

        [channels.phone]
        members = [ \(members) ]

        [channels.other]
        members = [ { account = "home", jid = "bob@example.org", encryption = "required" }, { local = "ops" } ]
        """
    }

    @Test("an OMEMO account: blind trust by default; its contacts omemo by default, the strictest membership wins; manual trust read")
    func defaults() throws {
        var loader = ConfigurationLoader(file: try ConfigurationLoaderTests.write(Self.file(
            omemo: "omemo = true",
            members: #"{ account = "home", jid = "bob@example.org" }, { account = "home", jid = "carol@example.org", encryption = "none" }, { local = "ops" }"#
        )))
        let configuration = try loader.loadBridge()
        #expect(configuration.accounts["home"]?.omemo == true && configuration.accounts["home"]?.omemoTrust == .blind)
        #expect(configuration.accounts["work"]?.omemo == false)
        #expect(configuration.encryption["home"] == ["bob@example.org": .required, "carol@example.org": ContactEncryption.none])
        #expect(configuration.encryption["work"] == nil)

        var manual = ConfigurationLoader(file: try ConfigurationLoaderTests.write(Self.file(omemo: "omemo = true\nomemo_trust = \"manual\"", members: #"{ local = "ops" }"#)))
        #expect(try manual.loadBridge().accounts["home"]?.omemoTrust == .manual)
    }

    @Test("check refuses encryption on a local or a room, required or omemo on an account without OMEMO, an unknown value, an unknown trust")
    func refusals() throws {
        let local = try ConfigurationLoaderTests.problems(Self.file(omemo: "omemo = true", members: #"{ local = "ops", encryption = "omemo" }"#))
        #expect(local.contains { $0.hasPrefix("channels.phone.members[0].encryption:") && $0.contains("does not apply to a local") }, "\(local)")
        let room = try ConfigurationLoaderTests.problems(Self.file(omemo: "omemo = true", members: #"{ account = "home", room = "dev@muc.example.org", encryption = "omemo" }, { local = "ops" }"#))
        #expect(room.contains { $0.hasPrefix("channels.phone.members[0].encryption:") && $0.contains("room") }, "\(room)")
        let plain = try ConfigurationLoaderTests.problems(Self.file(omemo: "", members: #"{ local = "ops" }"#))
        #expect(plain.contains { $0.hasPrefix("channels.other.members[0].encryption:") && $0.contains("no OMEMO device") }, "\(plain)")
        let unknown = try ConfigurationLoaderTests.problems(Self.file(omemo: "omemo = true", members: #"{ account = "home", jid = "bob@example.org", encryption = "pgp" }"#))
        #expect(unknown.contains { $0.hasPrefix("channels.phone.members[0].encryption:") && $0.contains("unknown encryption") }, "\(unknown)")
        let trust = try ConfigurationLoaderTests.problems(Self.file(omemo: "omemo = true\nomemo_trust = \"tofu\"", members: #"{ local = "ops" }"#))
        #expect(trust.contains { $0.hasPrefix("accounts.home.omemo_trust:") }, "\(trust)")
        let flag = try ConfigurationLoaderTests.problems(Self.file(omemo: "omemo = \"yes\"", members: #"{ local = "ops" }"#))
        #expect(flag.contains { $0.hasPrefix("accounts.home.omemo:") }, "\(flag)")
    }
}
