import BridgeState
import TransportCore

/// The routing table (issue 4, "Routing"): decides, without I/O, clock or randomness, which
/// endpoints receive a message a transport received.
///
/// Rules, in order:
/// 1. No body (chat states, receipts) → nothing is relayed as empty text; a subject with
///    no body (a room's subject change) goes only into channels with `subject = true`.
/// 2. A relay marker (`relayedBy`) → some bridge already relayed it; relaying once only is
///    what keeps loops through other bridges and multi-hop chains finite.
/// 3. Sent by one of this bridge's own accounts → it is one of our relays; this breaks the
///    loop when two accounts of this bridge sit in each other's channels.
/// 4. Only members relay: the source endpoint must be a sending member (`in`/`inout`) of a
///    channel — of the named one if local input names a channel. Strangers are never
///    relayed (no open relay).
/// 5. A channel whose filters (`ignore`, `only_from`; issue 25) refuse the message is left
///    out; its `replace` rules rewrite the text its targets get.
/// 6. Every receiving member (`out`/`inout`) of those channels gets the message once, except
///    the source endpoint and any member with the source's address (the same JID reachable
///    through another account must not get its own message back).
///
/// Addresses compare lower-cased, as bare JIDs do.
package struct Router: Sendable {
    /// One place an endpoint appears in the routing table.
    package struct Membership: Hashable, Sendable {
        /// Index into `channels`.
        package var channel: Int
        package var direction: ChannelMember.Direction

        package init(channel: Int, direction: ChannelMember.Direction) {
            self.channel = channel
            self.direction = direction
        }
    }

    /// The channels in configuration order, member addresses lower-cased.
    package let channels: [RelayChannel]
    /// Each channel's parsed `format`, by the same index.
    package let formats: [RelayFormat]
    /// Lower-cased bare JIDs of this bridge's own XMPP accounts.
    package let ownJIDs: Set<String>
    /// (transport, lower-cased address) → every membership of that endpoint, in channel order.
    package let memberships: [Endpoint: [Membership]]
    /// Gateway users and their linked accounts (issue 23), by the user's endpoint and by account.
    package let gatewayUsers: [Endpoint: GatewayLink]
    package let gatewayAccounts: [String: [GatewayLink]]
    /// The names gateway deliveries go under (``GatewayLink/channel``).
    package let gatewayChannels: Set<String>
    /// Channels' filters (issue 25), by channel name.
    package let filters: [String: ChannelFilter]
    /// The channels that keep an archive (`archive`, on by default; issue 25).
    package let archivedChannels: Set<String>
    /// Every room (XEP-0045) some channel has as a member, normalized.
    package let rooms: Set<Endpoint>

    package init(channels: [RelayChannel], ownJIDs: Set<String>, gatewayLinks: [GatewayLink] = [], filters: [String: ChannelFilter] = [:]) {
        self.filters = filters
        self.archivedChannels = Set(channels.filter(\.archives).map(\.name))
        let channels = channels.map { channel in
            var channel = channel
            channel.members = channel.members.map { ChannelMember(endpoint: Self.normalized($0.endpoint), direction: $0.direction, room: $0.room) }
            return channel
        }
        var memberships: [Endpoint: [Membership]] = [:]
        for (index, channel) in channels.enumerated() {
            for member in channel.members {
                memberships[member.endpoint, default: []].append(Membership(channel: index, direction: member.direction))
            }
        }
        self.channels = channels
        self.formats = channels.map { RelayFormat($0.format) }
        self.ownJIDs = Set(ownJIDs.map { $0.lowercased() })
        self.memberships = memberships
        self.rooms = Set(channels.flatMap { $0.members.filter { $0.room != nil }.map(\.endpoint) })
        self.gatewayUsers = Dictionary(gatewayLinks.map { ($0.userEndpoint, $0) }, uniquingKeysWith: { first, _ in first })
        self.gatewayAccounts = Dictionary(grouping: gatewayLinks, by: \.account)
        self.gatewayChannels = Set(gatewayLinks.map(\.channel))
    }

    /// `text` without NUL characters (a byte scan; copied only when it holds one).
    package static func withoutNUL(_ text: String) -> String {
        text.utf8.contains(0) ? text.replacingOccurrences(of: "\u{0}", with: "") : text
    }

    /// Decides where `message` goes; `makeID` supplies one relay stanza id per delivery.
    /// - Parameter references: the ids each target knows the message referred to by (a
    ///   correction, reply, reaction or retraction; issue 12), from the id map.
    package func route(_ message: InboundMessage, references: ReferenceMap = ReferenceMap(), makeID: () -> String) -> RoutingDecision {
        // A message with no text but a subject is a subject change (a room's, XEP-0045 §8.1):
        // relayed as text, only into channels that ask for it (`subject = true`).
        let content = message.content
        // A NUL (a local line or an HTTP body may hold one) is left out: no XMPP message can
        // carry it, and neither store's text keeps it whole.
        let written = message.body.map(Self.withoutNUL).flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        let operation = content.url != nil || content.reactionTo != nil || content.retractID != nil || content.encryption != nil
        let subjectChange = written == nil && !operation ? message.subject.map { "changed the subject to: \($0)" } : nil
        guard written != nil || subjectChange != nil || operation else {
            return .drop(reason: .noBody)
        }
        if let bridge = message.relayedBy {
            return .drop(reason: .alreadyRelayed(by: bridge))
        }
        let source = Self.normalized(message.source)
        if let address = source.address, self.ownJIDs.contains(address) {
            return .drop(reason: .fromOwnAccount)
        }

        let relay = RichRelay(text: written ?? subjectChange, content: content, references: references)
        if let link = self.gatewayUsers[source] {
            // A gateway user writes to a puppet: only to the contact it stands for.
            return self.routeFromGatewayUser(message, link: link, relay: relay, makeID: makeID)
        }
        let puppetDeliveries = subjectChange == nil && !message.isOccupantNotice ? self.routeToGatewayUsers(message, relay: relay, makeID: makeID) : []
        var channels = self.sendingChannels(of: source)
        if !puppetDeliveries.isEmpty, message.channel == nil, channels.isEmpty {
            return .deliver(puppetDeliveries)
        }
        if let name = message.channel {
            channels.removeAll { self.channels[$0].name != name }
            guard !channels.isEmpty else {
                return .drop(reason: .notAMemberOf(channel: name))
            }
        }
        guard !channels.isEmpty else {
            return .drop(reason: .notAMember)
        }
        if subjectChange != nil {
            channels.removeAll { !self.channels[$0].relaysSubject }
            guard !channels.isEmpty else { return .drop(reason: .noBody) }
        }
        if message.isOccupantNotice {
            channels.removeAll { !self.channels[$0].relaysOccupants }
            guard !channels.isEmpty else { return .drop(reason: .noReceivers) }
        }
        // 5. Filters (issue 25): a channel whose `ignore` or `only_from` refuses the message
        //    does not get it.
        if !self.filters.isEmpty {
            let fromRoom = self.isRoom(source)
            channels.removeAll { self.filters[self.channels[$0].name].map { !$0.admits(message, text: written ?? subjectChange, fromRoom: fromRoom) } ?? false }
            guard !channels.isEmpty else { return puppetDeliveries.isEmpty ? .drop(reason: .filtered) : .deliver(puppetDeliveries) }
        }

        var deliveries: [Delivery] = puppetDeliveries
        var reached: Set<Endpoint> = []
        var skipped = false
        for index in channels {
            let channel = self.channels[index]
            // A copy asks its target for a receipt only when the receipt goes back to a sender
            // who asked (an XMPP source; a local input's copies always ask, for its status).
            let wantsReceipt: Bool? = content.wantsReceipt == true && self.passesReceiptsBack(in: channel, to: source) ? true : nil
            // The channel's `replace` rules rewrite the text every target gets.
            let rewritten = self.filters[channel.name].flatMap { filter in
                filter.replace.isEmpty ? nil : RichRelay(text: (written ?? subjectChange).map(filter.rewrite), content: content, references: references)
            }
            for member in channel.members where member.direction.receives {
                let target = member.endpoint
                guard target != source || message.deliverToSourceTransport, source.address == nil || target.address != source.address,
                    reached.insert(target).inserted
                else { continue }
                let render = { (body: String) in
                    self.formats[index].render { placeholder in
                        switch placeholder {
                        case .account: message.source.transport
                        case .channel: channel.name
                        case .nick: message.nick
                        case .sender: message.sender
                        case .body: body
                        }
                    }
                }
                let pieces = (rewritten ?? relay).pieces(
                    for: target, room: member.room != nil, render: render, plainFormat: self.formats[index].isBodyOnly, reuploadMaxBytes: channel.reuploadMaxBytes
                )
                if pieces.isEmpty { skipped = true }
                for var piece in pieces {
                    piece.content.wantsReceipt = wantsReceipt
                    deliveries.append(
                        Delivery(
                            channel: channel.name, target: target, body: piece.body, originalBody: piece.originalBody, nick: message.nick,
                            subject: written != nil && piece.carriesSubject ? message.subject : nil, type: message.requestedType ?? channel.deliveryType,
                            source: message.source, sourceID: message.id, relayID: makeID(), content: piece.content
                        )
                    )
                }
            }
        }
        guard !deliveries.isEmpty else {
            if let encryption = content.encryption { return .drop(reason: .encrypted(encryption)) }
            return .drop(reason: skipped ? .unknownReference : .noReceivers)
        }
        return .deliver(deliveries)
    }

    /// The notice telling the sender of an encrypted message (issue 12) that the bridge cannot
    /// relay it, as a delivery back to the conversation it came from; nil when the sender is
    /// no sending member (strangers get no answer) or the source is local.
    package func encryptionNotice(for message: InboundMessage, relayID: String) -> Delivery? {
        // A room's sender has no address of its own here: a notice would go to every occupant.
        let source = Self.normalized(message.source)
        guard let encryption = message.content.encryption, source.address != nil, !self.isRoom(source) else { return nil }
        let text =
            if let reason = message.content.undecryptable {
                "This bridge could not decrypt your \(encryption) message (\(reason)); it was not passed on. It has asked for a new session: please send it again."
            } else {
                "This bridge cannot relay messages encrypted with \(encryption); your message was not passed on. Send it unencrypted to reach the other side."
            }
        if let notice = self.gatewayEncryptionNotice(for: message, text: text, relayID: relayID) { return notice }
        guard let channel = self.sendingChannels(of: source).first else { return nil }
        return Delivery(
            channel: self.channels[channel].name, target: Self.normalized(message.source), body: text, originalBody: text, nick: "xmpp-bridge",
            type: .chat, source: message.source, sourceID: message.id, relayID: relayID
        )
    }

    /// Whether receipts of `channel`'s copies go back to `source` (normalized): the channel
    /// passes them (`receipts`) and the source is a contact that receives in it.
    package func passesReceiptsBack(in channel: RelayChannel, to source: Endpoint) -> Bool {
        channel.passesReceipts && channel.members.contains { $0.room == nil && $0.endpoint == source && $0.direction.receives }
    }

    /// Whether `endpoint` (normalized) is a room (XEP-0045) in some channel.
    package func isRoom(_ endpoint: Endpoint) -> Bool {
        self.rooms.contains(endpoint)
    }

    /// Indices of the channels `source` may send into, ascending, each once.
    package func sendingChannels(of source: Endpoint) -> [Int] {
        var indices: [Int] = []
        for membership in self.memberships[source, default: []] where membership.direction.sends {
            if indices.last != membership.channel {
                indices.append(membership.channel)
            }
        }
        return indices
    }

    /// The endpoint as the routing table keys it: the address lower-cased.
    package static func normalized(_ endpoint: Endpoint) -> Endpoint {
        endpoint.normalized
    }
}
