import Foundation
import OMEMO
import OMEMOState
import XMPP

/// Sending encrypted (XEP-0384 v0.3 §5): to every trusted device of the contact and the
/// account's own other devices, sessions started from their bundles on the way.
extension AccountOMEMO {
    /// What became of one message.
    enum Sealing: Sendable {
        /// Goes as it is (`encryption = "none"`, or `"omemo"` and no trusted device).
        case plain
        /// Goes encrypted, as this message.
        case sealed(Message)
        /// Must wait: `"required"` and no trusted device of the contact yet.
        case wait(String)
        /// Could not be encrypted now; tried again later.
        case failed(String)
    }

    /// Each message with its contact's encryption; the keys they moved are committed once,
    /// for all, before this returns, so each may be written at once.
    func seal(_ messages: [(message: Message, encryption: ContactEncryption)], via link: some OMEMOLink) async -> [Sealing] {
        var outcomes: [Sealing] = []
        for (message, encryption) in messages {
            guard encryption != .none, let to = message.to, let body = message.body else {
                outcomes.append(.plain)
                continue
            }
            let contact = to.bare.description
            let recipients = await self.trustedDevices(of: contact, via: link)
            guard !recipients.isEmpty else {
                outcomes.append(encryption == .required ? .wait("no trusted OMEMO device of \(contact) yet") : .plain)
                continue
            }
            let own = contact == self.jid ? [] : await self.trustedDevices(of: self.jid, via: link)
            do {
                let encrypted = try self.device.encrypt(Array(body.utf8), for: recipients + own)
                for recipient in recipients { self.unanswered[recipient] = 0 }
                outcomes.append(.sealed(OMEMOMessage.sealed(message, as: encrypted)))
            } catch {
                self.logger.warning("not encrypted", metadata: ["to": "\(contact)", "error": "\(error)"])
                outcomes.append(.failed("\(error)"))
            }
        }
        do {
            try await self.commit(self.takePending())
        } catch {
            return outcomes.map { outcome in
                if case .sealed = outcome { return .failed("OMEMO state not committed: \(error)") }
                return outcome
            }
        }
        return outcomes
    }

    /// The devices of `jid` (ours other than this one, for the account's JID) that are
    /// trusted and have a session, sessions started where a trusted device has none yet.
    func trustedDevices(of jid: String, via link: some OMEMOLink) async -> [OMEMOAddress] {
        var list = self.deviceLists[jid]
        if list == nil, let fetched = await self.fetchDeviceList(of: jid, via: link) {
            _ = await self.received(fetched, of: jid)
            list = fetched
        }
        var trusted: [OMEMOAddress] = []
        for device in list?.devices ?? [] where !(jid == self.jid && device == self.deviceID) {
            let address = OMEMOAddress(jid: jid, device: device)
            if self.device.hasSession(with: address) {
                if let key = self.device.identityKey(of: address), self.trust.trusts(key, for: jid) { trusted.append(address) }
                continue
            }
            // A key already seen and not trusted: no fetch until a decision trusts it.
            if let key = self.device.identityKey(of: address), !self.trust.trusts(key, for: jid) { continue }
            if let until = self.unreachable[address], until > self.now() { continue }
            do {
                let bundle = try await self.fetchBundle(of: address, via: link)
                self.device.noteIdentity(bundle.identityKey, of: address)
                if let change = self.trust.observe(bundle.identityKey, for: jid) { self.pending.append(change) }
                guard self.trust.trusts(bundle.identityKey, for: jid) else { continue }
                // Another call may have started it meanwhile: a second start would replace it.
                if !self.device.hasSession(with: address) { try self.device.startSession(with: address, bundle: bundle) }
                trusted.append(address)
            } catch {
                self.logger.warning("OMEMO device passed over", metadata: ["device": "\(address)", "error": "\(error)"])
                self.unreachable[address] = self.now().addingTimeInterval(Double(self.configuration.bundleRetry.components.seconds))
            }
        }
        return trusted
    }

    /// Trust and device list changes waiting for the next commit.
    func takePending() -> [OMEMOStateChange] {
        defer { self.pending = [] }
        return self.pending
    }
}
