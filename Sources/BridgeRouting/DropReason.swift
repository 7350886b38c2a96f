/// Why a message is relayed nowhere: the router's reasons (issue 4, "Routing") and the
/// pipeline's own (a repeat, an echo, the state database). Logged at debug, never an
/// error: strangers, chat states and echoes of our own relays are expected traffic. Its
/// ``label`` counts it; its ``description`` is what a local source is told.
package enum DropReason: Hashable, Sendable, CustomStringConvertible {
    /// No body, or only whitespace: chat states (XEP-0085) and receipts (XEP-0184) are not
    /// relayed as empty text.
    case noBody
    /// The message carries a relay marker: some bridge (named) already relayed it. Relaying
    /// once only breaks loops through other bridges and multi-hop chains.
    case alreadyRelayed(by: String)
    /// Sent by one of this bridge's own accounts, so it is something we relayed: breaks the
    /// loop when two accounts of this bridge sit in each other's channels.
    case fromOwnAccount
    /// The source is a sending member of no channel: no open relay.
    case notAMember
    /// Local input named a channel the source is no sending member of (or that does not exist).
    case notAMemberOf(channel: String)
    /// The source's channels have no other member that may receive.
    case noReceivers
    /// End-to-end encrypted (OMEMO, OX, PGP, OTR; named): the bridge cannot read it, and its
    /// fallback body ("I sent you an OMEMO encrypted message…") is no text to relay.
    case encrypted(String)
    /// A retraction or reaction of a message none of the targets got from us.
    case unknownReference
    /// A gateway user's message names no contact (not to a puppet).
    case noAddressee
    /// The same deduplication key (a stanza-id, an Idempotency-Key) was handled before.
    case alreadyHandled
    /// One of our own relay ids came back.
    case echo
    /// The deliveries could not be committed.
    case stateError
    /// From a transport instance a reload replaced.
    case transportReplaced
    /// Every channel it would enter refuses it by its filters (`ignore`, `only_from`; issue 25).
    case filtered
    /// The same monitoring notification (another replica's copy) is being committed: the
    /// sender must try again, to be answered as a duplicate or, if that commit fails, relayed.
    case notificationPending

    /// The metric label of a reason: fixed words, no channel or bridge names. Each reason
    /// maps to one (the switch below is exhaustive), and ``labels`` lists every one.
    package enum Label: String, CaseIterable, Sendable {
        case noBody = "no_body"
        case alreadyRelayed = "already_relayed"
        case ownAccount = "own_account"
        case notAMember = "not_a_member"
        case noReceivers = "no_receivers"
        case encrypted
        case unknownReference = "unknown_reference"
        case noAddressee = "no_addressee"
        case duplicate
        case echo
        case stateError = "state_error"
        case transportReplaced = "transport_replaced"
        case notificationPending = "notification_pending"
        case filtered
    }

    /// Every ``label``, for the counters made at 0 before the first drop.
    package static let labels = Label.allCases.map(\.rawValue)

    /// A fixed label for metrics (no channel or bridge names).
    package var label: String { self.metricLabel.rawValue }

    package var metricLabel: Label {
        switch self {
        case .noBody: .noBody
        case .alreadyRelayed: .alreadyRelayed
        case .fromOwnAccount: .ownAccount
        case .notAMember, .notAMemberOf: .notAMember
        case .noReceivers: .noReceivers
        case .encrypted: .encrypted
        case .unknownReference: .unknownReference
        case .noAddressee: .noAddressee
        case .alreadyHandled: .duplicate
        case .echo: .echo
        case .stateError: .stateError
        case .transportReplaced: .transportReplaced
        case .notificationPending: .notificationPending
        case .filtered: .filtered
        }
    }

    package var description: String {
        switch self {
        case .noBody:
            "no body (chat state or receipt)"
        case .alreadyRelayed(let bridge):
            "already relayed by \(bridge)"
        case .fromOwnAccount:
            "sent by one of this bridge's own accounts"
        case .notAMember:
            "sender is no sending member of any channel"
        case .notAMemberOf(let channel):
            "sender is no sending member of channel \(channel)"
        case .noReceivers:
            "no other member of its channels may receive"
        case .encrypted(let kind):
            "encrypted with \(kind); the bridge cannot read it"
        case .unknownReference:
            "refers to a message no target got from this bridge"
        case .noAddressee:
            "written to no puppet"
        case .alreadyHandled:
            "already handled"
        case .echo:
            "echo of a relayed message"
        case .stateError:
            "state database error"
        case .transportReplaced:
            "transport replaced"
        case .notificationPending:
            "the same notification is being committed"
        case .filtered:
            "refused by the channel's filters"
        }
    }
}
