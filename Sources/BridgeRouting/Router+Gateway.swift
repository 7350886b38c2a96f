import TransportCore

/// Gateway routing (issue 23): a gateway user's message to a puppet goes to the contact it
/// stands for, through the linked account; a message a linked account receives from a
/// contact (not from a room) goes to the account's users, from the contact's puppet. The
/// text goes as written: the puppet itself says who wrote it.
extension Router {
    package func routeFromGatewayUser(_ message: InboundMessage, link: GatewayLink, relay: RichRelay, makeID: () -> String) -> RoutingDecision {
        guard let contact = message.addressee?.lowercased() else { return .drop(reason: .noAddressee) }
        guard !self.ownJIDs.contains(contact) else { return .drop(reason: .noReceivers) }
        let target = Endpoint(transport: link.account, address: contact)
        let deliveries = self.deliveries(of: message, to: target, channel: link.channel, relay: relay, makeID: makeID)
        guard !deliveries.isEmpty else {
            if let encryption = message.content.encryption { return .drop(reason: .encrypted(encryption)) }
            return .drop(reason: .unknownReference)
        }
        return .deliver(deliveries)
    }

    /// Deliveries to the users of every gateway linked to the message's account; none for
    /// rooms, the bridge's own accounts and accounts no gateway links.
    package func routeToGatewayUsers(_ message: InboundMessage, relay: RichRelay, makeID: () -> String) -> [Delivery] {
        let source = Self.normalized(message.source)
        guard let links = self.gatewayAccounts[source.transport], let address = source.address, !self.ownJIDs.contains(address), !self.isRoom(source) else {
            return []
        }
        return links.flatMap { link in
            self.deliveries(of: message, to: link.userEndpoint, channel: link.channel, relay: relay, makeID: makeID)
        }
    }

    private func deliveries(of message: InboundMessage, to target: Endpoint, channel: String, relay: RichRelay, makeID: () -> String) -> [Delivery] {
        // Through a gateway both sides are one conversation: a receipt always goes back.
        relay.pieces(for: target, render: { $0 }, plainFormat: true).map { piece in
            var piece = piece
            piece.content.wantsReceipt = message.content.wantsReceipt == true ? true : nil
            return Delivery(
                channel: channel, target: target, body: piece.body, originalBody: piece.originalBody, nick: message.nick, subject: message.subject,
                type: message.sourceType ?? .chat, source: message.source, sourceID: message.id, relayID: makeID(), content: piece.content
            )
        }
    }

    /// Whether `endpoint` (normalized) sends through a gateway link: a gateway user, or a
    /// contact of a linked account.
    package func relaysThroughGateway(_ endpoint: Endpoint) -> Bool {
        if self.gatewayUsers[endpoint] != nil { return true }
        guard self.gatewayAccounts[endpoint.transport] != nil, let address = endpoint.address else { return false }
        return !self.ownJIDs.contains(address) && !self.isRoom(endpoint)
    }

    /// Whether `channel` is the name gateway deliveries go under.
    package func isGatewayChannel(_ channel: String) -> Bool {
        self.gatewayChannels.contains(channel)
    }

    /// The gateway notice for an encrypted message from a gateway user or a linked
    /// account's contact: back to the sender, from the puppet when the sender is a user.
    package func gatewayEncryptionNotice(for message: InboundMessage, text: String, relayID: String) -> Delivery? {
        let source = Self.normalized(message.source)
        if let link = self.gatewayUsers[source], let contact = message.addressee?.lowercased() {
            return Delivery(
                channel: link.channel, target: source, body: text, originalBody: text, nick: "xmpp-bridge", type: .chat,
                source: Endpoint(transport: link.account, address: contact), sourceID: message.id, relayID: relayID
            )
        }
        guard self.relaysThroughGateway(source), let link = self.gatewayAccounts[source.transport]?.first else { return nil }
        return Delivery(
            channel: link.channel, target: source, body: text, originalBody: text, nick: "xmpp-bridge", type: .chat, source: message.source,
            sourceID: message.id, relayID: relayID
        )
    }
}
