import BridgeRouting
import AccountTransport
import GatewayComponent
import Logging
import TransportCore
import XMPP

/// Keeps gateway users and their linked accounts in step (issue 23), outside the relay
/// path: a contact's presence is shown from its puppet, the user's presence becomes the
/// linked account's, the account's roster is offered as puppets when the component
/// connects and when the roster changes, a user's subscription to a puppet makes the
/// account ask the contact, and a contact's request the account's policy left open is put
/// to the users from the contact's puppet (their approval answers it).
package actor GatewayCoordinator: TransportEventHandler {
    private var links: [GatewayLink]
    private let capabilities: @Sendable (String) async -> TransportCapabilities
    private let logger: Logger

    package init(links: [GatewayLink], capabilities: @escaping @Sendable (String) async -> TransportCapabilities, logger: Logger) {
        self.links = links
        self.capabilities = capabilities
        self.logger = logger
    }

    /// Applies a reloaded configuration or a registration; newly linked users get their
    /// puppets offered.
    package func update(links: [GatewayLink]) async {
        let added = links.filter { !self.links.contains($0) }
        self.links = links
        for link in added { await self.offer(link) }
    }

    package nonisolated func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.process(event, from: transport)
        return .accepted
    }

    private func process(_ event: TransportEvent, from transport: String) async {
        switch event {
        case .presence(let contact, _, let state):
            let endpoint = Router.normalized(contact)
            if let link = self.links.first(where: { $0.userEndpoint == endpoint }) {
                // The user's presence becomes the linked account's.
                await self.capabilities(link.account).presencePublishing?.publishPresence(state)
                return
            }
            guard let address = endpoint.address else { return }
            for link in self.links where link.account == endpoint.transport {
                await self.capabilities(link.gateway).puppets?.showPresence(of: address, state: state, to: link.user)
            }
        case .rosterChanged:
            for link in self.links where link.account == transport { await self.offer(link) }
        case .available:
            // The component (re)connected: offers and presences start afresh.
            for link in self.links where link.gateway == transport { await self.offer(link, withPresence: true) }
        case .subscriptionRequest(let from, _) where !self.links.contains(where: { $0.userEndpoint == Router.normalized(from) }):
            // A contact asks a linked account: the users decide, asked from its puppet.
            guard let contact = from.address else { return }
            for link in self.links where link.account == from.transport {
                await self.capabilities(link.gateway).puppets?.askSubscription(from: contact, to: link.user)
            }
        case .subscriptionApproved(let by, let addressee):
            guard let link = self.links.first(where: { $0.userEndpoint == Router.normalized(by) }),
                let account = await self.capabilities(link.account).roster, let contact = try? JID(addressee)
            else { return }
            do {
                try await account.approveSubscription(of: contact.bare)
            } catch {
                self.logger.warning("cannot approve the contact's subscription", metadata: ["account": "\(link.account)", "contact": "\(contact.bare)", "error": "\(error)"])
            }
        case .subscriptionRequest(let from, let addressee):
            guard let link = self.links.first(where: { $0.userEndpoint == Router.normalized(from) }),
                let account = await self.capabilities(link.account).roster, let contact = try? JID(addressee)
            else { return }
            let current = await account.rosterItems().first { $0.jid == contact.bare }
            guard current?.subscription != .to, current?.subscription != .both, current?.askSubscribe != true else { return }
            do {
                try await account.setRosterItem(current ?? RosterItem(jid: contact.bare), subscribe: true)
                self.logger.info("gateway user subscribed to a puppet; the linked account asks the contact", metadata: ["user": "\(link.user)", "contact": "\(contact.bare)"])
            } catch {
                self.logger.warning("cannot ask the contact for its presence", metadata: ["account": "\(link.account)", "contact": "\(contact.bare)", "error": "\(error)"])
            }
        case .message, .unavailable, .stopped, .inputFinished, .ownPresence, .bounced, .acknowledgedBeforeRestart, .resumePointMoved, .targetReady, .occupant,
            .receipt, .copyStanzaID, .alertAcked:
            return
        }
    }

    /// Offers `link`'s user the account's contacts as puppets (once the roster is known),
    /// and, after a (re)connection of the component, each contact's presence.
    private func offer(_ link: GatewayLink, withPresence: Bool = false) async {
        guard let gateway = await self.capabilities(link.gateway).puppets, await gateway.isConnected(),
            let account = await self.capabilities(link.account).roster, await account.rosterReady()
        else { return }
        let contacts = await account.rosterItems().filter { $0.jid.localpart != nil }
        await gateway.offerRoster(contacts, to: link.user)
        guard withPresence else { return }
        for contact in contacts {
            let state = await account.contactPresence(contact.jid)
            if state.availability != .unavailable {
                await gateway.showPresence(of: contact.jid.bare.description, state: state, to: link.user)
            }
        }
    }
}
