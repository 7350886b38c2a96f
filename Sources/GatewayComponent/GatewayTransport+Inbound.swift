import TransportCore
import XMPP
import XMPPMapping

/// What the component receives: users' messages to puppets, their presence and
/// subscriptions, requests to the gateway and its puppets, and the server's privilege
/// grant (XEP-0356 §4).
extension GatewayTransport {
    func receive(_ element: XMLElement) async {
        switch element.name {
        case "message":
            guard let message = try? Message(element: element) else { return }
            await self.receive(message)
        case "presence":
            guard let presence = try? Presence(element: element) else { return }
            await self.receive(presence)
        case "iq":
            await self.receive(iq: element)
        default:
            self.logger.debug("ignored element from the server", metadata: ["element": "\(element.name)"])
        }
    }

    /// The linked user `jid` (bare), if any.
    func user(_ jid: JID) -> GatewayUser? {
        self.state.withLockedValue { $0.users[jid.bare.description.lowercased()] }
    }

    private func receive(_ message: Message) async {
        guard let from = message.from, let to = message.to else { return }
        if from == self.serverDomain, to.localpart == nil {
            self.privilegeGranted(message)
            return
        }
        guard to.localpart != nil else { return }  // To the gateway itself: nothing to do.
        guard let user = self.user(from) else {
            self.logger.info("message from someone not linked; refused", metadata: ["from": "\(from.bare)"])
            await self.refuse(message, .registrationRequired, "register with \(self.domain) first")
            return
        }
        guard let contact = self.directory.puppets.contact(of: to.bare) else {
            await self.refuse(message, .itemNotFound, "\(to) stands for no address")
            return
        }
        let endpoint = Endpoint(transport: self.name, address: user.jid)
        if message.type == .error {
            if let id = message.id, let error = message.error {
                await self.handler.handle(.bounced(relayID: id, reason: error.description, permanent: !error.isTransient), from: self.name)
            }
            return
        }
        if let receipt = MessageReceipt.of(message) {
            await self.handler.handle(.receipt(DeliveryReceipt(relayID: receipt.id, from: endpoint, displayed: receipt.displayed)), from: self.name)
            return
        }
        guard message.type != .groupchat else { return }
        let (rich, text) = RichContent.parse(message)
        var inbound = InboundMessage(
            source: endpoint, sender: from.description, nick: from.localpart ?? from.domainpart, id: message.id ?? "\(self.name)-\(UInt64.random(in: 1...UInt64.max))",
            body: text, subject: message.subject, relayedBy: RelayMarker.relayedBy(message),
            // No stream management on a component stream: nothing to acknowledge.
            awaitsCommit: false
        )
        inbound.content = MessageContent(rich)
        inbound.addressee = contact
        inbound.sourceType = StanzaMapping.deliveryType(message.type)
        await self.handler.handle(.message(inbound), from: self.name)
    }

    /// An error answer to a message we will not take (none to errors, RFC 6120 §8.3.1).
    private func refuse(_ message: Message, _ condition: StanzaError.Condition, _ text: String) async {
        guard message.type != .error, let from = message.from, let to = message.to else { return }
        var reply = Message(type: .error, to: from, id: message.id, body: nil)
        reply.header.from = to
        reply.error = StanzaError(condition, text: text)
        try? await self.component.send([reply.element])
    }

    /// XEP-0356 §4: the server tells which privileges it granted.
    /// Puppets offered before the grant arrived went out as suggestions (the account's
    /// roster can load before the server's message comes): written now, beside the
    /// reading path, which reads the pushes' answers.
    private func privilegeGranted(_ message: Message) {
        guard let privilege = message.extensions.first(where: {
            $0.name == "privilege" && ($0.namespace == GatewayDirectory.Namespace.privilege || $0.namespace == GatewayDirectory.Namespace.privilegeV1)
        }) else { return }
        let roster = privilege.elements.first { $0.name == "perm" && $0[attribute: "access"] == "roster" }
        let granted = roster.map { $0[attribute: "type"] == "set" || $0[attribute: "type"] == "both" } ?? false
        let suggested = self.state.withLockedValue { state -> [String: [RosterOffer.Item]] in
            defer { state.rosterPrivilege = granted }
            return granted && !state.rosterPrivilege ? state.offer.offeredItems : [:]
        }
        self.logger.info("server privileges", metadata: ["roster": "\(roster?[attribute: "type"] ?? "none")"])
        if suggested.values.contains(where: { !$0.isEmpty }) { self.lateRosterWrites.continuation.yield(suggested) }
    }

    private func receive(_ presence: Presence) async {
        guard let from = presence.from, let to = presence.to, let user = self.user(from) else { return }
        let contact = self.directory.puppets.contact(of: to.bare)
        let puppet = to.bare
        switch presence.type {
        case .subscribe:
            guard let contact else { return }
            // The puppet accepts at once and asks back, so the user's presence reaches the
            // linked account; the account asks the contact (the bridge does that).
            var subscribed = Presence(type: .subscribed, to: from.bare)
            subscribed.header.from = puppet
            var subscribe = Presence(type: .subscribe, to: from.bare)
            subscribe.header.from = puppet
            let shown = self.state.withLockedValue { $0.shown[user.jid]?[contact.lowercased()] } ?? .unavailable
            try? await self.component.send([subscribed.element, subscribe.element, Self.presence(shown, from: puppet, to: from.bare)])
            await self.handler.handle(.subscriptionRequest(from: Endpoint(transport: self.name, address: user.jid), addressee: contact), from: self.name)
        case .unsubscribe:
            var unsubscribed = Presence(type: .unsubscribed, to: from.bare)
            unsubscribed.header.from = puppet
            try? await self.component.send([unsubscribed.element])
        case .probe:
            guard let contact else { return }
            let shown = self.state.withLockedValue { $0.shown[user.jid]?[contact.lowercased()] } ?? .unavailable
            try? await self.component.send([Self.presence(shown, from: puppet, to: from.bare)])
        case .available, .unavailable:
            await self.userPresence(user, resource: from.resourcepart ?? "", presence: presence)
        case .subscribed:
            // The user lets the contact see her presence: the linked account answers the
            // contact's request (if it asked; otherwise the server ignores the approval).
            guard let contact else { return }
            await self.handler.handle(.subscriptionApproved(by: Endpoint(transport: self.name, address: user.jid), addressee: contact), from: self.name)
        case .unsubscribed, .error:
            return
        }
    }

    /// One of the user's resources changed; the aggregate goes to the bridge when it changed.
    private func userPresence(_ user: GatewayUser, resource: String, presence: Presence) async {
        // Her avatar is not the linked account's: only availability and status cross.
        let state = StanzaMapping.state(presence).withoutAvatar
        let (before, after) = self.state.withLockedValue { current in
            let before = Self.aggregate(current.userResources[user.jid] ?? [:])
            if state.availability == .unavailable {
                current.userResources[user.jid]?[resource] = nil
            } else {
                current.userResources[user.jid, default: [:]][resource] = state
            }
            return (before, Self.aggregate(current.userResources[user.jid] ?? [:]))
        }
        guard before != after else { return }
        let nick = (try? JID(user.jid))?.localpart ?? user.jid
        await self.handler.handle(.presence(contact: Endpoint(transport: self.name, address: user.jid), nick: nick, state: after), from: self.name)
    }

    /// The most available of a user's resources (``PresenceState/Availability`` order); the
    /// first resource by name among equals.
    static func aggregate(_ resources: [String: PresenceState]) -> PresenceState {
        resources.max { ($0.value.availability, $1.key) < ($1.value.availability, $0.key) }?.value ?? .unavailable
    }

    private func receive(iq element: XMLElement) async {
        let answer = self.directory.answer(element) { jid in
            self.user(jid).map { (account: $0.account, configured: $0.configured) }
        }
        switch answer {
        case .none:
            return
        case .reply(let reply):
            try? await self.component.send([reply])
        case .register(_, _, _, let request), .unregister(_, let request), .vCard(_, _, let request):
            if case .dropped = self.slowRequests.continuation.yield(answer) {
                try? await self.component.send([GatewayDirectory.errorReply(request, .resourceConstraint, "too many requests; try again")])
            }
        }
    }

    /// Carries out a registration, an unregistration or a vCard request (off the reading path).
    func answer(_ answer: GatewayDirectory.Answer) async {
        switch answer {
        case .none, .reply:
            return
        case .register(let user, let address, let password, let request):
            guard let linking = self.linking else {
                try? await self.component.send([GatewayDirectory.errorReply(request, .serviceUnavailable, "registration is not available")])
                return
            }
            self.logger.info("registration", metadata: ["user": "\(user)", "address": "\(address)"])
            switch await linking.register(gateway: self.name, user: user.description, address: address, password: password) {
            case .success:
                try? await self.component.send([GatewayDirectory.result(request)])
            case .failure(let refusal):
                self.logger.notice("registration refused", metadata: ["user": "\(user)", "reason": "\(refusal)"])
                try? await self.component.send([GatewayDirectory.errorReply(request, refusal.condition, refusal.text)])
            }
        case .unregister(let user, let request):
            guard let linking = self.linking else {
                try? await self.component.send([GatewayDirectory.errorReply(request, .serviceUnavailable)])
                return
            }
            switch await linking.unregister(gateway: self.name, user: user.description) {
            case .success:
                try? await self.component.send([GatewayDirectory.result(request)])
            case .failure(let refusal):
                try? await self.component.send([GatewayDirectory.errorReply(request, refusal.condition, refusal.text)])
            }
        case .vCard(let user, let contact, let request):
            guard let account = self.user(user)?.account, let linking = self.linking, let card = await linking.vCard(account: account, contact: contact) else {
                try? await self.component.send([GatewayDirectory.errorReply(request, .itemNotFound)])
                return
            }
            try? await self.component.send([GatewayDirectory.result(request, payload: card)])
        }
    }
}
