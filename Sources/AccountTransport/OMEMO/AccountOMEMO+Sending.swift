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
            let (recipients, unknown) = await self.trustedDevices(of: contact, via: link)
            guard !recipients.isEmpty else {
                if unknown {
                    // Its devices could not be learned now (a timeout, a bundle not had):
                    // not a reason to send in plaintext; tried again.
                    outcomes.append(.failed("the OMEMO devices of \(contact) could not be read; tried again"))
                } else {
                    outcomes.append(encryption == .required ? .wait("no trusted OMEMO device of \(contact) yet") : .plain)
                }
                continue
            }
            let own = contact == self.jid ? [] : await self.trustedDevices(of: self.jid, via: link).devices
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
    /// trusted and have a session, sessions started where a trusted device has none yet;
    /// `unknown`: the device list or a device's bundle could not be had now.
    func trustedDevices(of jid: String, via link: some OMEMOLink) async -> (devices: [OMEMOAddress], unknown: Bool) {
        var list = self.deviceLists[jid]
        var unknown = false
        if list == nil {
            do {
                let fetched = try await self.fetchDeviceList(of: jid, via: link)
                _ = await self.received(fetched, of: jid)
                list = fetched
            } catch {
                // No answer: asked again with the next message. A refusal (no access, a
                // list that is not one): no devices to encrypt to.
                unknown = Self.isTransient(error)
            }
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
                // A bundle whose signed prekey its identity did not sign leaves nothing behind.
                guard self.device.verifies(bundle) else { throw OMEMOError("use the bundle of \(address)", reason: "its signed prekey is not signed by its identity") }
                self.device.noteIdentity(bundle.identityKey, of: address)
                if let change = self.trust.observe(bundle.identityKey, for: jid) { self.pending.append(change) }
                guard self.trust.trusts(bundle.identityKey, for: jid) else { continue }
                // Another call may have started it meanwhile: a second start would replace it.
                if !self.device.hasSession(with: address) { try self.device.startSession(with: address, bundle: bundle) }
                trusted.append(address)
            } catch {
                self.logger.warning("OMEMO device passed over", metadata: ["device": "\(address)", "error": "\(error)"])
                if Self.isTransient(error) {
                    // The server did not answer: asked again with the next message.
                    unknown = true
                } else {
                    // No bundle, or a bad one (a stale device on the list): passed over for a while.
                    let now = self.now()
                    Self.bound(&self.unreachable, now: now, keep: 0)
                    self.unreachable[address] = now.addingTimeInterval(Double(self.configuration.bundleRetry.components.seconds))
                }
            }
        }
        return (trusted, unknown)
    }

    /// Whether a request failed for want of an answer (the connection, a timeout), not
    /// because of what the server answered.
    static func isTransient(_ error: any Error) -> Bool {
        guard let error = error as? XMPPSessionError else { return false }
        if case .stanzaError = error { return false }
        return true
    }

    /// Trust and device list changes waiting for the next commit.
    func takePending() -> [OMEMOStateChange] {
        defer { self.pending = [] }
        return self.pending
    }
}
