import Foundation
import OMEMO
import OMEMOState
import XMPP

/// Publishing our device and bundle, fetching contacts' (XEP-0384 v0.3 §4 over PEP).
extension AccountOMEMO {
    /// After each login: our device on the account's list (put back if another client's
    /// update dropped it), the signed prekey turned over when due, the bundle published
    /// when this process has not yet or it changed.
    func announce(via link: some OMEMOLink) async {
        do {
            // Not read, not written: a list published from a failed read would drop the
            // account's other devices.
            let own = try await self.fetchDeviceList(of: self.jid, via: link)
            if let republish = await self.received(own, of: self.jid) {
                try await self.publish(OMEMOPubSub.publish(republish), via: link)
                _ = await self.received(republish, of: self.jid)
                self.logger.info("OMEMO device added to the account's device list", metadata: ["device": "\(self.deviceID)"])
            }
            if try self.device.rotateSignedPreKey(now: self.now(), every: self.configuration.signedPreKeyRotation) {
                try await self.commit()
                self.bundlePublished = false
            }
            if !self.bundlePublished { try await self.publishBundle(via: link) }
        } catch {
            self.logger.warning("OMEMO device not announced; tried again at the next login", metadata: ["error": "\(error)"])
        }
    }

    /// Publishes the bundle as it is now (after a prekey was used: refilled first).
    func publishBundle(via link: some OMEMOLink) async throws {
        if try self.device.refillPreKeys() { try await self.commit() }
        try await self.publish(OMEMOPubSub.publish(try self.device.bundle, device: self.deviceID), via: link)
        self.bundlePublished = true
    }

    /// Publishes with an open access model; a server that refuses the option (a node made
    /// earlier with another model) gets the publish without it.
    private func publish(_ pubsub: XMLElement, via link: some OMEMOLink) async throws {
        do {
            _ = try await link.request(IQ(type: .set, id: await link.nextID(), payload: pubsub), timeout: self.configuration.requestTimeout)
        } catch XMPPSessionError.stanzaError(let error) where error.condition == .conflict || error.applicationCondition?.name == "precondition-not-met" {
            var plain = pubsub
            plain.children.removeAll { if case .element(let element) = $0 { element.name == "publish-options" } else { false } }
            self.logger.notice("PEP publish options refused; published with the node's own access model", metadata: ["error": "\(error)"])
            _ = try await link.request(IQ(type: .set, id: await link.nextID(), payload: plain), timeout: self.configuration.requestTimeout)
        }
    }

    /// `jid`'s device list from its PEP node: empty when it has none; throws when it could
    /// not be had or read (logged).
    func fetchDeviceList(of jid: String, via link: some OMEMOLink) async throws -> OMEMODeviceList {
        do {
            guard let result = try await self.fetch(OMEMOWire.deviceListNode, of: jid, via: link) else { return OMEMODeviceList([]) }
            return try OMEMODeviceList(element: result, limit: self.configuration.deviceLimit)
        } catch {
            self.logger.warning("OMEMO device list not read", metadata: ["jid": "\(jid)", "error": "\(error)"])
            throw error
        }
    }

    /// `address`'s bundle; throws when there is none or it is not well formed.
    func fetchBundle(of address: OMEMOAddress, via link: some OMEMOLink) async throws -> OMEMOBundle {
        guard let result = try await self.fetch(OMEMOWire.bundleNode(for: address.device), of: address.jid, via: link) else {
            throw OMEMOError("fetch the bundle of \(address)", reason: "no bundle published")
        }
        return try OMEMOBundle(element: result, preKeyLimit: self.configuration.preKeyLimit)
    }

    /// The newest item's payload of `node` at `jid`; nil when the node or item does not exist.
    private func fetch(_ node: String, of jid: String, via link: some OMEMOLink) async throws -> XMLElement? {
        let to = try JID(jid)
        do {
            let answer = try await link.request(IQ(type: .get, id: await link.nextID(), to: to, payload: OMEMOPubSub.fetch(node: node)), timeout: self.configuration.requestTimeout)
            return OMEMOPubSub.payload(ofResult: answer.payload)
        } catch XMPPSessionError.stanzaError(let error) where error.condition == .itemNotFound {
            return nil
        }
    }
}
