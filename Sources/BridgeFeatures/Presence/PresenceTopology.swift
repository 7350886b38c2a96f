import TransportCore

/// Who feeds whose presence (issue 5, "Presence relay on channels" and "Own-presence
/// mirror"), derived from the configuration alone: no presence, no clock.
///
/// An XMPP account can only publish its own presence (RFC 6121 §4.2, §4.4), so when a
/// channel links a contact on one side to someone on the other, the account that faces the
/// other side takes on the contact's presence:
/// - A **contact** is a sending member (`in`/`inout`) of a presence channel that has an
///   address and whose transport is an account, e.g. `work:alice@work.example`.
/// - It **feeds** every account that is the transport of another receiving member
///   (`out`/`inout`) of that channel, unless that account is the contact's own: in
///   `[work:alice, home:bob]`, alice (seen through `work`) feeds `home`, and bob feeds `work`.
/// - It reaches every receiving member of that channel whose transport is **not** an account
///   (a local transport: socket, stdout, …) as a local event.
/// - A **mirror** target (`[[presence_mirror]]` `to`) follows the user's other clients on
///   its source account exclusively: no contact feeds it. The first mirror naming a target
///   wins; mirrors onto themselves or naming unknown accounts are ignored. Mirrors are not
///   transitive: a target follows the source's *other* clients, never what the bridge
///   published there.
/// - The bridge's own accounts are never contacts (as in the router): their presence is the
///   bridge's own output, and relaying it back would loop.
///
/// Channels with presence off contribute nothing. Addresses compare lower-cased, as bare
/// JIDs do.
package struct PresenceTopology: Hashable, Sendable {
    /// A local transport that receives a contact's presence changes through a channel.
    package struct LocalTarget: Hashable, Sendable {
        package var channel: String
        package var transport: String

        package init(channel: String, transport: String) {
            self.channel = channel
            self.transport = transport
        }
    }

    /// Names of the XMPP transports (accounts); every other transport is local.
    package let accounts: Set<String>
    /// Lower-cased bare JIDs of the bridge's own accounts.
    package let ownJIDs: Set<String>
    /// Mirror target → the account whose other clients it follows.
    package let mirrorSource: [String: String]
    /// Mirror source → its targets, sorted.
    package let mirrorTargets: [String: [String]]
    /// Contact → the accounts it feeds, sorted. Mirror targets never appear.
    package let fedAccounts: [Endpoint: [String]]
    /// Account → the contacts feeding it. Only accounts with at least one feeder appear.
    package let feeders: [String: Set<Endpoint>]
    /// Contact → the local transports it reaches, in channel and member order, each once.
    package let localTargets: [Endpoint: [LocalTarget]]

    package init(
        channels: [RelayChannel], presenceChannels: Set<String>, accounts: Set<String>,
        mirrors: [(from: String, to: String)], ownJIDs: Set<String> = []
    ) {
        var mirrorSource: [String: String] = [:]
        for mirror in mirrors
        where mirror.from != mirror.to && accounts.contains(mirror.from) && accounts.contains(mirror.to)
            && mirrorSource[mirror.to] == nil
        {
            mirrorSource[mirror.to] = mirror.from
        }
        var mirrorTargets: [String: [String]] = [:]
        for (target, source) in mirrorSource {
            mirrorTargets[source, default: []].append(target)
        }

        let ownJIDs = Set(ownJIDs.map { $0.lowercased() })
        var fed: [Endpoint: Set<String>] = [:]
        var localTargets: [Endpoint: [LocalTarget]] = [:]
        for channel in channels where presenceChannels.contains(channel.name) {
            // Rooms have occupants, not a presence of their own to relay or to be shown.
            let members = channel.members.filter { $0.room == nil }.map { ChannelMember(endpoint: Self.normalized($0.endpoint), direction: $0.direction) }
            for source in members where source.direction.sends {
                let contact = source.endpoint
                guard accounts.contains(contact.transport), let address = contact.address, !ownJIDs.contains(address) else {
                    continue
                }
                for target in members where target.direction.receives && target.endpoint != contact {
                    let transport = target.endpoint.transport
                    if accounts.contains(transport) {
                        if transport != contact.transport, mirrorSource[transport] == nil {
                            fed[contact, default: []].insert(transport)
                        }
                    } else {
                        let local = LocalTarget(channel: channel.name, transport: transport)
                        if !localTargets[contact, default: []].contains(local) {
                            localTargets[contact, default: []].append(local)
                        }
                    }
                }
            }
        }

        var feeders: [String: Set<Endpoint>] = [:]
        for (contact, accounts) in fed {
            for account in accounts {
                feeders[account, default: []].insert(contact)
            }
        }

        self.accounts = accounts
        self.ownJIDs = ownJIDs
        self.mirrorSource = mirrorSource
        self.mirrorTargets = mirrorTargets.mapValues { $0.sorted() }
        self.fedAccounts = fed.mapValues { $0.sorted() }
        self.feeders = feeders
        self.localTargets = localTargets
    }

    /// Whether the relay drives this account's presence: it follows a mirror or is fed by
    /// at least one contact.
    package func isManaged(_ account: String) -> Bool {
        self.mirrorSource[account] != nil || self.feeders[account] != nil
    }

    /// Whether `endpoint` is one of the bridge's own accounts seen as a contact.
    package func isOwnAccount(_ endpoint: Endpoint) -> Bool {
        endpoint.address.map { self.ownJIDs.contains($0) } ?? false
    }

    /// The endpoint with its address lower-cased, as bare JIDs compare.
    package static func normalized(_ endpoint: Endpoint) -> Endpoint {
        Endpoint(transport: endpoint.transport, address: endpoint.address?.lowercased())
    }
}
