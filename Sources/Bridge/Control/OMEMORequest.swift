import OMEMO
import OMEMOState
import XMPP

/// An `omemo` request (issue 41) checked against the configuration: an account with
/// `omemo = true`; for a decision, a contact's bare JID and a fingerprint as clients show
/// it (spaces, colons, upper case and a leading `05` accepted).
package struct OMEMORequest {
    package var account: String
    /// The account's bare JID.
    package var jid: String
    /// For `omemo-trust` and `omemo-distrust`.
    package var decision: (contact: String, key: [UInt8], level: OMEMOTrustLevel)?

    /// Why a request is refused.
    package struct Refusal: Error {
        package var text: String
        init(_ text: String) { self.text = text }
    }

    /// The request, or why it is refused.
    package static func parse(_ request: ControlRequest, configuration: BridgeConfiguration) -> Result<OMEMORequest, Refusal> {
        let omemo = configuration.accounts.values.filter(\.omemo).map(\.name).sorted()
        guard let name = request.transport, let account = configuration.accounts[name], account.omemo else {
            return .failure(.init("no OMEMO account '\(request.transport ?? "")' (with omemo = true: \(omemo.isEmpty ? "none" : omemo.joined(separator: ", ")))"))
        }
        var parsed = OMEMORequest(account: name, jid: account.client.jid.bare.description)
        guard request.op != .omemoFingerprints else { return .success(parsed) }
        guard let text = request.address, let contact = try? JID(text), !contact.isFull else {
            return .failure(.init("'\(request.address ?? "")' is not a contact's bare JID"))
        }
        guard let fingerprint = request.fingerprint.flatMap(OMEMOFingerprint.init(parsing:)) else {
            return .failure(.init("'\(request.fingerprint ?? "")' is not a fingerprint: 64 hex characters, as `omemo fingerprints` shows them"))
        }
        parsed.decision = (contact.description, [0x05] + fingerprint.key, request.op == .omemoTrust ? .verified : .distrusted)
        return .success(parsed)
    }
}
