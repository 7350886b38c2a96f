import Bridge
import CBuildInfo

/// What `xmpp-bridge --version` says: the version (written once, ``BridgeIdentity/version``)
/// and the commit the binary was built from. This file owns the C side (`CBuildInfo`).
enum BuildInfo {
    /// `git describe --always --dirty` at build time, or "unknown".
    static let commit = String(cString: xmpp_bridge_build_commit())

    /// "0.1.0 (commit 1a2b3c4)".
    static let versionLine = "\(BridgeIdentity.version) (commit \(commit))"
}
