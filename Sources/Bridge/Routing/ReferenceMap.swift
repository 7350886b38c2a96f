import Transports

/// The ids each endpoint knows one message by (issue 12): how a correction (XEP-0308), reply
/// (XEP-0461), reaction (XEP-0444) or retraction (XEP-0424) of it is addressed to each target.
///
/// A message is referred to by the id its referrer knows:
/// - its own message: the id it sent it with; each target got a copy under a relay id;
/// - a copy it received from us: that copy's relay id; the original's source knows the
///   source id, and every other target its own copy's relay id.
/// In a room, each also has the stanza-id the room gave it (XEP-0359), which a room's
/// replies, reactions and retractions use; corrections use the message id everywhere.
/// Built from id map rows without I/O; addresses compare lower-cased.
struct ReferenceMap: Hashable, Sendable {
    /// The ids one endpoint knows the message by.
    struct Known: Hashable, Sendable {
        var id: String
        var stanzaID: String?
    }

    private(set) var known: [Endpoint: Known] = [:]

    init() {}

    /// - Parameters:
    ///   - own: copies of the referrer's own message with that id, oldest first.
    ///   - received: the copy the referrer got under that relay id, if it is one.
    ///   - siblings: every copy of `received`'s original, oldest first.
    init(own: [RelayRecord], received: RelayRecord?, siblings: [RelayRecord]) {
        if !own.isEmpty {
            for record in own { self.add(record.target, Known(id: record.relayID, stanzaID: record.targetStanzaID)) }
        } else if let received {
            self.add(received.source, Known(id: received.sourceID, stanzaID: received.sourceStanzaID))
            for record in siblings { self.add(record.target, Known(id: record.relayID, stanzaID: record.targetStanzaID)) }
        }
    }

    /// The id `target` knows the message by: in a room, for anything but a correction, the
    /// room's stanza-id when it gave one; nil when `target` never got the message.
    func id(for target: Endpoint, room: Bool = false, correction: Bool = false) -> String? {
        guard let known = self.known[Router.normalized(target)] else { return nil }
        return room && !correction ? known.stanzaID ?? known.id : known.id
    }

    var isEmpty: Bool { self.known.isEmpty }

    /// The first copy per endpoint counts (a split message's first part).
    private mutating func add(_ endpoint: Endpoint, _ ids: Known) {
        let key = Router.normalized(endpoint)
        if self.known[key] == nil { self.known[key] = ids }
    }
}
