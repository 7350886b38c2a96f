import Foundation

/// Which Prosody a ``ProsodyServer`` runs: Debian oldstable's 0.12 (the system package)
/// or Debian stable's 13 (from bookworm-backports, unpacked beside it under
/// ``ProsodyRelease/stableRoot`` by `scripts/install-prerequisites.sh`, so both live on one
/// machine). Tests take the default from `XMPP_BRIDGE_TEST_PROSODY` (`0.12` or `13`).
public enum ProsodyRelease: String, Sendable, CaseIterable, CustomStringConvertible {
    case oldstable = "0.12"
    case stable = "13"

    /// Where the unpacked Prosody 13 lives.
    public static let stableRoot = "/opt/prosody-13"

    /// The release tests use unless they name one: `XMPP_BRIDGE_TEST_PROSODY`, else 0.12.
    public static var testDefault: ProsodyRelease {
        ProcessInfo.processInfo.environment["XMPP_BRIDGE_TEST_PROSODY"].flatMap(ProsodyRelease.init(rawValue:)) ?? .oldstable
    }

    public var description: String { "Prosody \(self.rawValue)" }

    /// The folder with `prosody` and `prosodyctl`.
    var binaries: String {
        switch self {
        case .oldstable: "/usr/bin"
        case .stable: "\(Self.stableRoot)/usr/bin"
        }
    }

    /// The folder of its modules (`mod_NAME.lua`).
    var modules: String {
        switch self {
        case .oldstable: "/usr/lib/prosody/modules"
        case .stable: "\(Self.stableRoot)/usr/lib/prosody/modules"
        }
    }

    var prosody: String { "\(self.binaries)/prosody" }
    var prosodyctl: String { "\(self.binaries)/prosodyctl" }

    /// What is missing to run this release here.
    public var missingPrerequisites: [String] {
        var missing = [self.prosody, self.prosodyctl].filter { !FileManager.default.isExecutableFile(atPath: $0) }
        if Subprocess.which("openssl") == nil { missing.append("openssl") }
        return missing
    }
}
