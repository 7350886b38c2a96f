import Transports

/// The ids each endpoint knows one message by (issue 12): how a correction (XEP-0308), reply
/// (XEP-0461), reaction (XEP-0444) or retraction (XEP-0424) of it is addressed to each target.
///
/// A message is referred to by the id its referrer knows:
/// - its own message: the id it sent it with; each target got a copy under a relay id;
/// - a copy it received from us: that copy's relay id; the original's source knows the
///   source id, and every other target its own copy's relay id.
/// Built from id map rows without I/O; addresses compare lower-cased.
struct ReferenceMap: Hashable, Sendable {
    private(set) var ids: [Endpoint: String] = [:]

    init() {}

    /// - Parameters:
    ///   - own: copies of the referrer's own message with that id, oldest first.
    ///   - received: the copy the referrer got under that relay id, if it is one.
    ///   - siblings: every copy of `received`'s original, oldest first.
    init(own: [RelayRecord], received: RelayRecord?, siblings: [RelayRecord]) {
        if !own.isEmpty {
            for record in own { self.add(record.target, record.relayID) }
        } else if let received {
            self.add(received.source, received.sourceID)
            for record in siblings { self.add(record.target, record.relayID) }
        }
    }

    /// The id `target` knows the message by; nil when it never got it.
    func id(for target: Endpoint) -> String? {
        self.ids[Router.normalized(target)]
    }

    var isEmpty: Bool { self.ids.isEmpty }

    /// The first copy per endpoint counts (a split message's first part).
    private mutating func add(_ endpoint: Endpoint, _ id: String) {
        let key = Router.normalized(endpoint)
        if self.ids[key] == nil { self.ids[key] = id }
    }
}
