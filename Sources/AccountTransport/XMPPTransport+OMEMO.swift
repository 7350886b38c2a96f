import Logging
import OMEMO
import OMEMOState
import TransportCore
import XMPP

/// The account as an OMEMO device (issue 41): what arrives is followed and decrypted before
/// it becomes an ``InboundMessage``; what goes to a contact is encrypted per its
/// `encryption` just before it is written.
extension XMPPTransport {
    /// Opens the account's OMEMO device; false (and the account stopped) when its state
    /// cannot be read. Not in the transport's run loop: that task keeps its largest frames
    /// for life.
    @inline(never)
    func openOMEMO(_ settings: OMEMOSettings, side: SideWork) async -> Bool {
        do {
            let device = try await AccountOMEMO.open(
                jid: self.session.account.description, configuration: .init(trust: settings.trust), keeper: settings.keeper, loop: self.eventLoop,
                side: side, logger: self.logger
            )
            self.omemo.withLockedValue { $0 = device }
            return true
        } catch {
            self.logger.error("OMEMO state unreadable; the account does not start", metadata: ["error": "\(error)"])
            await self.handler.handle(.stopped(reason: "OMEMO state unreadable: \(error)"), from: self.name)
            return false
        }
    }

    /// What became of an arriving message.
    enum OMEMOArrival {
        /// Goes on as this message (decrypted, or never encrypted); `undecryptable`: why it
        /// could not be read (it goes on still encrypted, for the notice to its sender).
        case relay(Message, undecryptable: String?)
        /// Decrypted: goes on as this message, its text read.
        case decrypted(Message)
        /// Nothing to relay.
        case done
    }

    /// `message` through the device, if the account is one, and what must follow once it
    /// is relayed (``omemoFollowUp(_:)``).
    func omemoArrival(_ message: Message) async -> (OMEMOArrival, AccountOMEMO.FollowUp?) {
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { return (.relay(message, undecryptable: nil), nil) }
        // Most messages are neither encrypted nor a PEP notification: no hop onto the device.
        guard message.extensions.contains(where: { $0.name == "encrypted" || $0.name == "event" }) else { return (.relay(message, undecryptable: nil), nil) }
        if !message.extensions.contains(where: { $0.name == "event" }), let (opening, followUp) = omemo.openingInTurn(of: message) {
            return (Self.arrival(opening, of: message), followUp.isEmpty ? nil : followUp)
        }
        let (opening, followUp, followed) = await omemo.arrive(message, via: self.session)
        if followed {
            // A contact's devices changed: a delivery waiting for a trusted one may go.
            if let from = message.from {
                await self.handler.handle(.targetReady(Endpoint(transport: self.name, address: from.bare.description)), from: self.name)
            }
            return (.done, nil)
        }
        return (Self.arrival(opening, of: message), followUp.isEmpty ? nil : followUp)
    }

    /// What must follow an opened message, done once the message is relayed.
    func omemoFollowUp(_ followUp: AccountOMEMO.FollowUp?) async {
        guard let followUp, let omemo = self.omemo.withLockedValue({ $0 }) else { return }
        await omemo.perform(followUp, via: self.session)
    }

    static func arrival(_ opening: AccountOMEMO.Opening, of message: Message) -> OMEMOArrival {
        switch opening {
        case .plain: return .relay(message, undecryptable: nil)
        case .opened(let opened): return .decrypted(opened)
        case .consumed: return .done
        case .refused(let reason): return .relay(message, undecryptable: reason)
        }
    }

    /// The device's keys moved by a burst handed to the journal when due
    /// (``AccountOMEMO/flushIfDue()``), in this turn when on the device's loop.
    func omemoFlushIfDue() async {
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { return }
        if !omemo.flushIfDueInTurn() { await omemo.flushIfDue() }
    }

    /// `inbound` as it goes on after the device took `arrival`: a decrypted message's text
    /// is relayed (an `aesgcm://` link, XEP-0454, as a file: a target that encrypts passes
    /// it on to clients that open it); one that could not be read carries why, for the
    /// notice to its sender.
    static func mark(_ inbound: inout InboundMessage, after arrival: OMEMOArrival) {
        switch arrival {
        case .decrypted:
            inbound.content.encryption = nil
            if let body = inbound.body, body.hasPrefix("aesgcm://"), !body.contains(where: \.isWhitespace) { inbound.content.url = body }
        case .relay(_, let undecryptable):
            inbound.content.undecryptable = undecryptable
        case .done:
            break
        }
    }

    /// The `encryption` of messages to `contact` (a bare JID).
    func encryption(for contact: JID) -> ContactEncryption {
        self.contactEncryption.withLockedValue { $0[contact.bare.description] } ?? .omemo
    }

    /// A reload's new `encryption` per contact.
    public func setEncryption(_ encryption: [String: ContactEncryption]) {
        self.contactEncryption.withLockedValue { $0 = encryption }
    }

    /// Whether a message to `jid` would go encrypted: `required`, or `omemo` with a trusted
    /// device, found as ``omemoSeal(_:_:_:)`` finds them (its device list and bundles
    /// fetched, sessions started, kept for the seal); when that cannot be told now, yes: a
    /// file the sender encrypted is never put on a server in the clear by a guess.
    func mayEncrypt(to jid: JID) async -> Bool {
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { return false }
        switch self.encryption(for: jid) {
        case .none: return false
        case .required: return true
        case .omemo:
            let (devices, unknown) = await omemo.trustedDevices(of: jid.bare.description, via: self.session)
            return !devices.isEmpty || unknown
        }
    }

    /// `messages` (those to contacts, `chat` or `normal`) encrypted per their contact's
    /// `encryption`; one that must wait or failed gets its result at `indices` in
    /// `results` and leaves `messages`.
    func omemoSeal(_ messages: inout [Message], _ indices: inout [Int], _ results: inout [DeliveryResult?]) async {
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { return }
        let candidates = messages.map { message -> ContactEncryption in
            guard message.type == .chat || message.type == .normal, let to = message.to else { return .none }
            return self.encryption(for: to)
        }
        guard candidates.contains(where: { $0 != .none }) else { return }
        let outcomes = await omemo.seal(Array(zip(messages, candidates)).map { (message: $0.0, encryption: $0.1) }, via: self.session)
        var kept: [Message] = []
        var keptIndices: [Int] = []
        for (position, outcome) in outcomes.enumerated() {
            switch outcome {
            case .plain:
                kept.append(messages[position])
                keptIndices.append(indices[position])
            case .sealed(let sealed):
                kept.append(sealed)
                keptIndices.append(indices[position])
            case .wait(let reason):
                results[indices[position]] = .waitForTarget(reason)
            case .failed(let reason):
                results[indices[position]] = .retryLater(reason)
            }
        }
        messages = kept
        indices = keptIndices
    }

    /// After each login: the device announced, off the event path.
    func announceOMEMO() {
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { return }
        let session = self.session
        omemo.side.add { await omemo.announce(via: session) }
    }
}

extension XMPPTransport {
    /// The account's OMEMO state now; nil when it is no OMEMO device (or not open yet).
    public func omemoState() async -> OMEMOAccountState? {
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { return nil }
        return await omemo.state
    }

    /// A decision by hand on `contact`'s key; a delivery waiting for a trusted device of
    /// the contact may go then. Throws when the account is no OMEMO device or the decision
    /// could not be committed.
    public func decideOMEMOTrust(_ level: OMEMOTrustLevel, key: [UInt8], for contact: String) async throws -> Bool {
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { throw OMEMOError("decide trust", reason: "\(self.name) is no OMEMO device") }
        let changed = try await omemo.decide(level, key, for: contact)
        if changed { await self.handler.handle(.targetReady(Endpoint(transport: self.name, address: contact)), from: self.name) }
        return changed
    }
}
