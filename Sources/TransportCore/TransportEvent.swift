import StanzaIdentity

/// What a transport reports to the bridge.
public indirect enum TransportEvent: Sendable {
    /// A message for the router.
    case message(InboundMessage)
    /// The transport can deliver now (connected, or a local output ready): flush its queue.
    case available
    /// The transport cannot deliver for now (offline, reconnecting); queued deliveries wait.
    case unavailable(reason: String?)
    /// The transport gave up after an error another try cannot fix by itself (wrong
    /// password, rejected certificate); it stays down until restarted (SIGHUP, or
    /// `xmpp-bridge reconnect`).
    case stopped(reason: String)
    /// The transport's input has ended for good (stdin closed) and it asks the bridge to
    /// finish queued deliveries and stop.
    case inputFinished
    /// A contact's presence changed (RFC 6121 §4); `contact` is the transport plus the
    /// contact's bare JID, `state` the aggregate of its resources.
    case presence(contact: Endpoint, nick: String, state: PresenceState)
    /// The user's other clients on this account changed presence (own resources other than
    /// the bridge's, aggregated).
    case ownPresence(PresenceState)
    /// The account's roster changed (fetched after connecting, or a push).
    case rosterChanged
    /// `from` asked to see the presence of `addressee` (RFC 6121 §3.1): a gateway user
    /// subscribing to a puppet (`addressee` the contact), or a contact asking an account
    /// that leaves it to someone (`addressee` the account's own JID).
    case subscriptionRequest(from: Endpoint, addressee: String)
    /// `by` let `addressee` see its presence (RFC 6121 §3.1.5): a gateway user approving a
    /// puppet's request (`addressee` the contact).
    case subscriptionApproved(by: Endpoint, addressee: String)
    /// A delivery the other side had accepted came back as an error (an XMPP `type='error'`
    /// message carrying one of our relay ids, RFC 6120 §8.3): `permanent` ones will not
    /// succeed on another try.
    case bounced(relayID: String, reason: String, permanent: Bool)
    /// Deliveries the other side took before this process ended, learnt only now (XMPP
    /// stream resumption after a restart, XEP-0198 §5): they are delivered, not to be sent
    /// again.
    case acknowledgedBeforeRestart(relayIDs: [String])
    /// The transport's resume point in its source's history moved (an XMPP account's
    /// archive cursor, XEP-0313): stored in order with the messages before it, and handed
    /// back at the next start so the transport can fetch what it missed.
    case resumePointMoved(ResumePoint)
    /// A target that could not take deliveries can now (a room joined again, XEP-0045):
    /// its deliveries held by ``DeliveryResult/waitForTarget(_:)`` go now.
    case targetReady(Endpoint)
    /// Someone entered (`joined`) or left a room that is a channel member.
    case occupant(room: Endpoint, nick: String, joined: Bool)
    /// A recipient's client sent a receipt for a relayed copy (XEP-0184 receipt, XEP-0333 marker).
    case receipt(DeliveryReceipt)
    /// The room `target` gave our copy `relayID` this stanza-id (XEP-0359), seen on its
    /// reflection; replies, reactions and retractions in the room refer to it.
    case copyStanzaID(relayID: String, target: Endpoint, stanzaID: StanzaID)
    /// An alert from `source` (its id `id` there) relayed in `channel` was acknowledged
    /// (issue 24): told to the channel's local subscribers.
    case alertAcked(AlertAck, channel: String, source: Endpoint, id: String)
}
