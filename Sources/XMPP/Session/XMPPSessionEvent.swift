import StanzaIdentity

/// What a running ``XMPPSession`` reports to its owner, in order.
public indirect enum XMPPSessionEvent: Sendable {
    /// Connected, bound and restored (roster fetched, presence sent) as this JID.
    case online(JID)
    /// The connection ended; the session reconnects unless it was stopped or gave up.
    case offline(XMPPClientError?)
    /// A message (or a carbon copy of one, XEP-0280).
    case message(Message, carbon: CarbonDirection?)
    /// A contact's presence changed; `best` is the contact's aggregate (RFC 6121 §4).
    case presence(Presence, best: Presence?)
    /// Someone asks to see our presence and policy did not approve it (RFC 6121 §3.1.3).
    case subscriptionRequest(from: JID, Presence)
    /// subscribed / unsubscribe / unsubscribed from a contact.
    case subscriptionChanged(Presence)
    /// The roster changed by a push (RFC 6121 §2.1.6).
    case rosterChanged(Roster.PushOutcome)
    /// The whole roster was fetched again after a resumed stream had reported online
    /// (RFC 6121 §2.2): whoever read it then reads it again.
    case rosterFetched
    /// A session stored before a restart was resumed (XEP-0198 §5): the server had handled
    /// the stanzas with these ids before the process ended. Stanzas of the old session it
    /// did not count are not sent again by the session: their owner sends them anew.
    case resumedAfterRestart(handledIDs: [String])
    /// A catch-up from the account's archive (XEP-0313) finished: the archive cursor now
    /// stands here, after every message event before this one.
    case archiveCursorMoved(ArchiveCursor)
    /// A room's state changed (joined, out for now, stopped), XEP-0045.
    case roomChanged(RoomStatus)
    /// Someone entered (`joined`) or left a room we are in.
    case occupant(room: JID, nick: String, joined: Bool)
    /// A catch-up from a room's archive finished: its cursor now stands here, after every
    /// message event before this one.
    case roomCursorMoved(room: JID, ArchiveCursor)
    /// A room reflected a message we sent with `id` and gave it `stanzaID` (XEP-0359 §6), the
    /// id its occupants' replies, reactions and retractions use. Never relayed.
    case copyStanzaID(room: JID, id: String, stanzaID: StanzaID)
    /// The session ended for good: stopped (nil) or a permanent failure.
    case stopped(XMPPClientError?)
}
