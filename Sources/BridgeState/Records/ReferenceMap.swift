import StanzaIdentity
import TransportCore

/// The ids each endpoint knows one message by (issue 12): how a correction (XEP-0308), reply
/// (XEP-0461), reaction (XEP-0444) or retraction (XEP-0424) of it is addressed to each target.
///
/// A message is referred to by the id its referrer knows:
/// - its own message: the id it sent it with; each target got a copy under a relay id;
/// - a copy it received from us: that copy's relay id; the original's source knows the
///   source id, and every other target its own copy's relay id.
/// One message may have reached a target as several copies (a caption and its file, the
/// parts of a split message): a correction applies to the first, a reply or reaction to
/// the last (the file), a retraction to all. In a room each copy also has the stanza-id
/// the room gave it (XEP-0359), which a room's replies, reactions and retractions use;
/// corrections use the message id everywhere. Built from id map rows without I/O;
/// addresses compare lower-cased.
package struct ReferenceMap: Hashable, Sendable {
    /// The ids one endpoint knows one copy by.
    package struct Known: Hashable, Sendable {
        package var id: String
        package var stanzaID: StanzaID?

        package init(id: String, stanzaID: StanzaID? = nil) {
            self.id = id
            self.stanzaID = stanzaID
        }
    }

    package private(set) var known: [Endpoint: [Known]] = [:]

    package init() {}

    /// - Parameters:
    ///   - own: copies of the referrer's own message with that id, oldest first.
    ///   - received: the copy the referrer got under that relay id, if it is one.
    ///   - siblings: every copy of `received`'s original, oldest first.
    package init(own: [RelayRecord], received: RelayRecord? = nil, siblings: [RelayRecord]) {
        if !own.isEmpty {
            for record in own { self.add(record.target, Known(id: record.relayID, stanzaID: record.copyStanzaID)) }
        } else if let received {
            self.add(received.source, Known(id: received.sourceID, stanzaID: received.sourceStanzaID))
            for record in siblings { self.add(record.target, Known(id: record.relayID, stanzaID: record.copyStanzaID)) }
        }
    }

    /// The id `target` knows the message by for a correction (its first copy's message id)
    /// or, else, a reply or reaction (its last copy; in a room by the room's stanza-id when
    /// it gave one); nil when `target` never got the message.
    package func id(for target: Endpoint, room: Bool = false, correction: Bool = false) -> String? {
        guard let copies = self.known[target.normalized] else { return nil }
        if correction { return copies.first?.id }
        return copies.last.map { room ? $0.stanzaID?.rawValue ?? $0.id : $0.id }
    }

    /// Every id `target` knows a copy of the message by (a retraction retracts them all).
    package func ids(for target: Endpoint, room: Bool = false) -> [String] {
        (self.known[target.normalized] ?? []).map { room ? $0.stanzaID?.rawValue ?? $0.id : $0.id }
    }

    package var isEmpty: Bool { self.known.isEmpty }

    private mutating func add(_ endpoint: Endpoint, _ ids: Known) {
        let key = endpoint.normalized
        guard self.known[key]?.contains(ids) != true else { return }
        self.known[key, default: []].append(ids)
    }
}
