import OMEMO
import OMEMOState

/// Decisions by hand (`xmpp-bridge omemo trust|distrust`, issue 41) and what the
/// `fingerprints` listing reads.
extension AccountOMEMO {
    /// The state as it is now: keys, trust, device lists.
    var state: OMEMOAccountState {
        OMEMOAccountState(keys: self.device.keys, trust: self.trust.levels, deviceLists: self.deviceLists.mapValues(\.devices))
    }

    /// `key` of `jid` gets `level` (verified or distrusted), committed before this returns.
    /// False when it was so already.
    func decide(_ level: OMEMOTrustLevel, _ key: [UInt8], for jid: String) async throws -> Bool {
        guard let change = self.trust.decide(level, key, for: jid) else { return false }
        self.pending.append(change)
        try await self.commit(self.takePending())
        self.logger.notice("OMEMO trust decided", metadata: ["jid": "\(jid)", "trust": "\(level.rawValue)", "fingerprint": "\(OMEMOFingerprint(publicKey: key).map { "\($0)" } ?? "-")"])
        return true
    }
}
