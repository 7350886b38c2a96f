import Foundation
import OMEMO
import OMEMOState
import XMPP

/// Receiving (XEP-0384 v0.3 §6): messages decrypted, key transports taken in, device list
/// notifications followed; what cannot be read is refused with its reason and its
/// device's session repaired.
///
/// These run on the account's event path, which the session's reading waits for: what
/// needs an answer from the server (a publish, a bundle fetch) is done in a task beside it,
/// never awaited here.
extension AccountOMEMO {
    enum Opening: Sendable {
        /// Not encrypted with OMEMO: handled as before.
        case plain
        /// Decrypted: `message` has the text as its body.
        case opened(Message)
        /// Nothing to relay (a key transport, our own echo, a device list).
        case consumed
        /// Not readable, for this reason (told to the sender).
        case refused(String)
    }

    /// `message` through the device in one call (one hop onto the actor per message): a
    /// device list notification followed (`.consumed`; `followed` true), else opened (what
    /// must follow, for after the relay).
    func arrive(_ message: Message, via link: some OMEMOLink) async -> (opening: Opening, followUp: FollowUp, followed: Bool) {
        if await self.follow(message, via: link) { return (.consumed, FollowUp(), true) }
        let (opening, followUp) = self.opening(of: message)
        return (opening, followUp, false)
    }

    /// A device list notification in `message` is kept (our own device put back on ours).
    /// True when `message` was one.
    func follow(_ message: Message, via link: some OMEMOLink) async -> Bool {
        guard let notice = OMEMOPubSub.deviceListNotice(in: message) else { return false }
        // PEP notifications come from an account's bare JID (or our server, for our own).
        guard message.from?.resourcepart == nil else { return true }
        let jid = message.from?.bare.description ?? self.jid
        let list: OMEMODeviceList
        switch notice {
        case .cleared:
            list = OMEMODeviceList([])
        case .list(let element):
            do {
                list = try OMEMODeviceList(element: element, limit: self.configuration.deviceLimit)
            } catch {
                self.logger.warning("OMEMO device list refused", metadata: ["jid": "\(jid)", "error": "\(error)"])
                return true
            }
        }
        if let republish = await self.received(list, of: jid) {
            self.side.add { await self.putBack(republish, of: jid, via: link) }
        }
        return true
    }

    /// Publishes `list`, our device put back on it (another client's update dropped it).
    func putBack(_ list: OMEMODeviceList, of jid: String, via link: some OMEMOLink) async {
        do {
            _ = try await link.request(IQ(type: .set, id: await link.nextID(), payload: OMEMOPubSub.publish(list)), timeout: self.configuration.requestTimeout)
            _ = await self.received(list, of: jid)
            self.logger.notice("OMEMO device put back on the account's device list", metadata: ["device": "\(self.deviceID)"])
        } catch {
            self.logger.warning("OMEMO device not put back on the device list", metadata: ["error": "\(error)"])
        }
    }

    /// What must follow an opened message once it is relayed (its entries handed to the
    /// journal first: keys that moved past a message are never durable before it, so a
    /// message the server hands over again after a crash is read again, and the relay's
    /// own de-duplication drops the second copy): a new session handed to the journal, a key
    /// transport to its sender, the bundle published again after a key exchange used one of
    /// its prekeys, a repair of a broken session.
    struct FollowUp: Sendable {
        /// The device's keys to the journal now (a new session).
        var flush = false
        var keyTransport: OMEMOAddress?
        var publishBundle = false
        var repair: OMEMOAddress?

        var isEmpty: Bool { !self.flush && self.keyTransport == nil && !self.publishBundle && self.repair == nil }
    }

    /// `message` opened, if it is encrypted with OMEMO: decrypted, trust and counters kept;
    /// what must follow is for the caller to ``perform(_:via:)`` once it relayed the
    /// message. Synchronous, so it runs in the caller's turn on the account's loop.
    func opening(of message: Message) -> (Opening, FollowUp) {
        // OMEMO in rooms is not supported: a room's encrypted message is handled as before.
        guard message.type == .chat || message.type == .normal, let element = OMEMOMessage.encryptedElement(of: message), let from = message.from else {
            return (.plain, FollowUp())
        }
        let jid = from.bare.description
        let encrypted: OMEMOEncrypted
        do {
            encrypted = try OMEMOEncrypted(element: element, limits: self.configuration.limits)
        } catch {
            self.logger.warning("OMEMO message refused", metadata: ["from": "\(jid)", "error": "\(error)"])
            return (.refused("\(error.reason)"), FollowUp())
        }
        if jid == self.jid, encrypted.senderDevice == self.deviceID { return (.consumed, FollowUp()) }
        var followUp = FollowUp()
        let decrypted: OMEMODecrypted
        do {
            decrypted = try self.device.decrypt(encrypted, from: jid)
        } catch .alreadyRead(let sender) {
            // Relayed before (its keys reach the journal only after it): the server hands
            // over again what it was not told was handled before a restart.
            self.logger.info("OMEMO message read before, dropped (handed over again)", metadata: ["from": "\(sender)"])
            return (.consumed, FollowUp())
        } catch {
            self.logger.warning("OMEMO message not decrypted", metadata: ["from": "\(jid)", "error": "\(error)"])
            // Only a device its account lists is repaired: anyone can claim any device id.
            if error.wantsRepair, self.deviceLists[jid]?.contains(error.sender.device) == true { followUp.repair = error.sender }
            return (.refused(Self.reason(error)), followUp)
        }
        var trusted = false
        if let key = decrypted.identityKey {
            if let change = self.trust.observe(key, for: jid) { self.pending.append(change) }
            trusted = self.trust.trusts(key, for: jid)
        }
        // A new session is handed to the journal right after the message (``perform``),
        // before the account acknowledges it: the sender's next messages depend on it. A
        // ratchet step of an existing session goes with a later flush (``flushIfDue()``).
        self.readSinceFlush += 1
        followUp.flush = decrypted.startedSession
        // Clients answer a key exchange with a key transport, so the sender's next messages
        // stop carrying one; and every so many messages without an answer, so its chain
        // stays short.
        let count = (self.unanswered[decrypted.sender] ?? 0) + 1
        if self.unanswered.count > Self.trackedDevices { self.unanswered.removeAll() }
        self.unanswered[decrypted.sender] = count
        if decrypted.startedSession || count >= self.configuration.heartbeatAfter { followUp.keyTransport = decrypted.sender }
        if decrypted.startedSession {
            // One of our prekeys is used up: the bundle gets a new one.
            self.bundlePublished = false
            followUp.publishBundle = true
        }
        guard let plaintext = decrypted.plaintext else { return (.consumed, followUp) }
        guard trusted else {
            self.logger.warning(
                "OMEMO message from a device not trusted; not relayed",
                metadata: ["from": "\(decrypted.sender)", "fingerprint": "\(decrypted.identityKey.flatMap(OMEMOFingerprint.init(publicKey:)).map { "\($0)" } ?? "-")"]
            )
            return (.refused("the device it came from is not trusted by the bridge; verify its fingerprint with `xmpp-bridge omemo trust`"), followUp)
        }
        return (.opened(OMEMOMessage.opened(message, plaintext: String(decoding: plaintext, as: UTF8.self))), followUp)
    }

    /// What ``opening(of:)`` said must follow: a new session to the journal, the key
    /// transport sent (its keys committed first); a bundle publish and a repair beside the
    /// event path (``SideWork``), which never waits for the server.
    func perform(_ followUp: FollowUp, via link: some OMEMOLink) async {
        if followUp.flush { self.flush() }
        if let repair = followUp.repair {
            self.side.add { await self.repair(repair, via: link) }
        }
        if let address = followUp.keyTransport {
            await self.sendKeyTransport(to: address, via: link)
        }
        if followUp.publishBundle {
            self.side.add { await self.publishBundleAfterExchange(via: link) }
        }
    }

    /// The bundle with a new prekey in place of the one a key exchange used up.
    func publishBundleAfterExchange(via link: some OMEMOLink) async {
        do {
            try await self.publishBundle(via: link)
        } catch {
            self.logger.warning("OMEMO bundle not published after a key exchange; published at the next login", metadata: ["error": "\(error)"])
        }
    }

    /// A new key exchange with `address` (its bundle, a new session, a key transport), at
    /// most once per ``Configuration/repairInterval``: its next messages can be read again.
    func repair(_ address: OMEMOAddress, via link: some OMEMOLink) async {
        let now = self.now()
        if let last = self.repaired[address], now.timeIntervalSince(last) < Double(self.configuration.repairInterval.components.seconds) { return }
        self.repaired[address] = now
        Self.bound(&self.repaired, now: now, keep: Double(self.configuration.repairInterval.components.seconds))
        do {
            let bundle = try await self.fetchBundle(of: address, via: link)
            guard self.device.verifies(bundle) else { throw OMEMOError("repair the session with \(address)", reason: "its bundle's signed prekey is not signed by its identity") }
            if let change = self.trust.observe(bundle.identityKey, for: address.jid) { self.pending.append(change) }
            try self.device.startSession(with: address, bundle: bundle)
            self.logger.notice("OMEMO session repaired with a new key exchange", metadata: ["device": "\(address)"])
            await self.sendKeyTransport(to: address, via: link)
        } catch {
            self.logger.warning("OMEMO session not repaired", metadata: ["device": "\(address)", "error": "\(error)"])
        }
    }

    /// An empty OMEMO message to `address` alone, its keys committed before it is written.
    func sendKeyTransport(to address: OMEMOAddress, via link: some OMEMOLink) async {
        do {
            let encrypted = try self.device.encrypt(nil, for: [address])
            try await self.commit(self.takePending())
            self.unanswered[address] = 0
            try await link.send(OMEMOMessage.keyTransport(to: try JID(address.jid), id: await link.nextID(), encrypted))
        } catch {
            self.logger.warning("OMEMO key transport not sent", metadata: ["device": "\(address)", "error": "\(error)"])
        }
    }

    /// At most ``AccountOMEMO/trackedDevices`` entries in a per-device table of times: past
    /// that, those older than `keep` seconds go, and if none is, the table starts over.
    static func bound(_ table: inout [OMEMOAddress: Date], now: Date, keep: Double) {
        guard table.count > Self.trackedDevices else { return }
        table = table.filter { now.timeIntervalSince($0.value) < keep }
        if table.count > Self.trackedDevices { table.removeAll() }
    }

    private static func reason(_ error: OMEMODecryptionError) -> String {
        switch error {
        case .notForThisDevice: "it was not encrypted for the bridge's device"
        case .session(_, let reason, _): reason
        case .payload(_, let reason): reason
        case .alreadyRead: "a message already decrypted"
        }
    }
}
