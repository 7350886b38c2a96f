/// Matches IQ responses to the requests this session sent (RFC 6120 §8.2.3, §10.1).
///
/// Every `get`/`set` we send is recorded with its id, its addressee and a deadline.
/// A `result`/`error` is accepted as the answer only when it comes from the entity
/// the request was sent to; anything else with a known id is reported as spoofed and
/// the request stays pending, because the genuine answer may still arrive.
///
/// Who may answer (RFC 6120 §10.1, §10.3, §10.5):
/// - a request with a `to` must be answered from exactly that JID; a request to our
///   own bare JID is handled by our server on the account's behalf, which may reply
///   without a `from`;
/// - a request without a `to` is handled by our server, whose reply may carry no
///   `from`, our bare JID, our full JID, or the bare domain.
///
/// It does no I/O and reads no clock: deadlines are values of `Instant`, and the
/// owner calls ``expire(now:)`` when its timer fires.
public struct IQTracker<Instant: InstantProtocol>: Sendable where Instant: Sendable {
    /// What a `result` or `error` IQ turned out to be.
    public enum ResponseOutcome: Hashable, Sendable {
        /// The answer to the pending request `id`, which is now finished.
        case matched(id: String)
        /// The id is pending but the sender may not answer it; the request stays pending.
        case spoofed(id: String, from: JID?)
        /// No request with this id is pending (never sent, already answered, or expired).
        case unknown(id: String)
    }

    private struct Request: Sendable {
        var to: JID?
        var deadline: Instant
        /// Order of sending, so requests with equal deadlines expire in the order sent.
        var sequence: UInt64
    }

    /// The session's full JID; replies are judged against it. Update after rebinding.
    public var ownJID: JID
    private var pending: [String: Request] = [:]
    private var nextSequence: UInt64 = 0

    /// - Parameter ownJID: the full JID bound for this session (RFC 6120 §7).
    public init(ownJID: JID) {
        self.ownJID = ownJID
    }

    /// How many requests await an answer.
    public var pendingCount: Int { self.pending.count }

    /// Whether a request with this id awaits an answer.
    public func isPending(_ id: String) -> Bool {
        self.pending[id] != nil
    }

    /// The earliest deadline among pending requests, for the owner's timer.
    public var nextDeadline: Instant? {
        self.pending.values.lazy.map { $0.deadline }.min()
    }

    /// Records a `get`/`set` request that has been sent.
    ///
    /// - Parameters:
    ///   - id: the request's id; reusing the id of a pending request replaces it,
    ///     since the two answers could not be told apart.
    ///   - to: the request's `to`, or nil when it is addressed to our server.
    ///   - deadline: when to give up waiting (see ``expire(now:)``).
    public mutating func requestSent(id: String, to: JID?, deadline: Instant) {
        self.pending[id] = Request(to: to, deadline: deadline, sequence: self.nextSequence)
        self.nextSequence &+= 1
    }

    /// Judges an incoming IQ of type `result` or `error` (RFC 6120 §8.2.3).
    ///
    /// A `get` or `set` is a request, not an answer: it is reported as ``ResponseOutcome/unknown(id:)``
    /// and changes nothing.
    public mutating func responseReceived(_ iq: IQ) -> ResponseOutcome {
        let id = iq.id
        switch iq.type {
        case .get, .set:
            return .unknown(id: id)
        case .result, .error:
            break
        }
        guard let request = self.pending[id] else { return .unknown(id: id) }
        guard self.accepts(reply: iq.from, toRequestAddressedTo: request.to) else {
            return .spoofed(id: id, from: iq.from)
        }
        self.pending[id] = nil
        return .matched(id: id)
    }

    /// Removes the requests whose deadline is at or before `now` and returns their ids,
    /// earliest deadline first (ties in the order sent).
    public mutating func expire(now: Instant) -> [String] {
        let expired = self.pending
            .filter { $0.value.deadline <= now }
            .sorted { lhs, rhs in
                lhs.value.deadline != rhs.value.deadline
                    ? lhs.value.deadline < rhs.value.deadline
                    : lhs.value.sequence < rhs.value.sequence
            }
            .map { $0.key }
        for id in expired {
            self.pending[id] = nil
        }
        return expired
    }

    /// Forgets every pending request (the stream ended) and returns their ids in the order sent.
    public mutating func cancelAll() -> [String] {
        let ids = self.pending.sorted { $0.value.sequence < $1.value.sequence }.map { $0.key }
        self.pending.removeAll()
        return ids
    }

    // MARK: - Address rule

    /// Whether `from` may answer a request sent to `to` (RFC 6120 §10.1, §10.3, §10.5).
    private func accepts(reply from: JID?, toRequestAddressedTo to: JID?) -> Bool {
        let ownBare = self.ownJID.bare
        guard let to else {
            // Handled by our server on behalf of the account.
            guard let from else { return true }
            let isOwnDomain = from.localpart == nil && from.resourcepart == nil && from.domainpart == self.ownJID.domainpart
            return from == ownBare || from == self.ownJID || isOwnDomain
        }
        guard let from else { return to == ownBare }
        return from == to
    }
}
