/// One instance's hold on one leased resource (issue 26: an XMPP account, a gateway
/// component, a FIFO, socket or stdio local), which one instance at a time works on
/// through a lease row in the shared state: owner, epoch, expiry.
///
/// The database decides who holds a lease and when it expires, by its own clock (`now()
/// + ttl` at each grant or renewal). This machine decides when this instance may work,
/// by its own monotonic clock, and never for longer than the database could have granted:
/// a grant or renewal *requested* at `t` is good here until `t + ttl - margin`, since the
/// database set its expiry no earlier than `t + ttl` by its clock. That holds whatever the
/// two clocks' offset, as long as their rates differ by less than the margin allows, the
/// database's clock never steps forward, the clock here keeps counting while the machine
/// is suspended (`ContinuousClock`), and the owner's timer does not share a thread with a
/// database call that may block. It renews every `ttl / 3`; when no renewal has succeeded in time it stops working
/// before the lease can expire (self-fencing). An instance that was paused (SIGSTOP, a
/// stall) wakes past that point and fences before anything else; whatever it still
/// commits carries its old epoch, which the database refuses once another owner moved it.
///
/// It does no I/O and reads no clock: the owner runs its actions, reports the answers and
/// calls ``timerFired(now:)`` at ``nextDeadline``. One request at a time: the owner reports
/// each request's answer, or its failure (a timeout included), before acting on the next
/// action; an answer is never matched to a later request than its own.
package struct LeaseStateMachine<Instant: InstantProtocol & Sendable>: Sendable where Instant.Duration == Duration {
    /// The lease's length and this instance's margin.
    package struct Configuration: Hashable, Sendable {
        /// How long an owner may be silent before another takes over (`lease_ttl`).
        package var ttl: Duration
        /// How much sooner than the lease could expire this instance stops working: room for
        /// the two clocks running at slightly different rates and for stopping itself.
        package var margin: Duration

        /// `margin` defaults to a fifth of `ttl`; it is kept between 0 and two thirds of it
        /// (so a renewal period fits before the end of a grant).
        package init(ttl: Duration = .seconds(10), margin: Duration? = nil) {
            self.ttl = ttl
            self.margin = min(max(margin ?? ttl / 5, .zero), ttl * 2 / 3)
        }

        /// How often a held lease is renewed.
        package var renewEvery: Duration { self.ttl / 3 }
        /// How often a lease another instance holds is asked for again: a tenth of the ttl,
        /// a second at most, so a dead owner's leases are taken soon after they expire.
        package var retryEvery: Duration { min(self.ttl / 10, .seconds(1)) }
    }

    /// Whether the lease is ours, and until when.
    package enum State: Hashable, Sendable {
        /// Not ours: asked for again at `retryAt`.
        case waiting(retryAt: Instant)
        /// Asked for at `requestedAt`; no answer yet (the owner's request timeout ends it).
        case acquiring(requestedAt: Instant)
        /// Ours with `epoch`, good until `validUntil`; renewed at `renewAt`, or now if a
        /// renewal is under way since `renewing`.
        case held(epoch: Int64, validUntil: Instant, renewAt: Instant, renewing: Instant?)
        /// Given back (or being given back): nothing more happens.
        case released
    }

    /// What the owner does next.
    package enum Action: Hashable, Sendable {
        /// Ask the database for the lease (take it if free or expired).
        case acquire
        /// Extend the lease held with `epoch`.
        case renew(epoch: Int64)
        /// Start working on the resource; every commit for it carries `epoch`.
        case start(epoch: Int64)
        /// Stop working on the resource now: the lease may be gone.
        case fence
        /// Give the lease with `epoch` back (a graceful stop, or over the fair share).
        case release(epoch: Int64)
    }

    package let configuration: Configuration
    package private(set) var state: State

    package init(configuration: Configuration = Configuration(), now: Instant) {
        self.configuration = configuration
        self.state = .waiting(retryAt: now)
    }

    /// Whether this instance may work on the resource at `now`.
    package func mayWork(now: Instant) -> Bool {
        if case .held(_, let validUntil, _, _) = self.state { return now < validUntil }
        return false
    }

    /// When the owner should call ``timerFired(now:)`` next; nil once released.
    package var nextDeadline: Instant? {
        switch self.state {
        case .waiting(let retryAt): retryAt
        case .acquiring: nil
        case .held(_, let validUntil, let renewAt, let renewing): renewing == nil ? min(renewAt, validUntil) : validUntil
        case .released: nil
        }
    }

    /// The timer set for ``nextDeadline`` (or any later moment) fired.
    package mutating func timerFired(now: Instant) -> [Action] {
        switch self.state {
        case .waiting(let retryAt):
            guard now >= retryAt else { return [] }
            self.state = .acquiring(requestedAt: now)
            return [.acquire]
        case .acquiring:
            return []
        case .held(let epoch, let validUntil, let renewAt, let renewing):
            if now >= validUntil {
                // No renewal in time (the database unreachable, or this process paused).
                self.state = .waiting(retryAt: now)
                return [.fence]
            }
            guard renewing == nil, now >= renewAt else { return [] }
            self.state = .held(epoch: epoch, validUntil: validUntil, renewAt: renewAt, renewing: now)
            return [.renew(epoch: epoch)]
        case .released:
            return []
        }
    }

    /// The database granted the lease with `epoch` (for the request under way).
    package mutating func acquired(epoch: Int64, now: Instant) -> [Action] {
        guard case .acquiring(let requestedAt) = self.state else { return [] }
        let validUntil = requestedAt.advanced(by: self.configuration.ttl - self.configuration.margin)
        guard now < validUntil else {
            // Answered too late to use: asked for again at once.
            self.state = .waiting(retryAt: now)
            return []
        }
        self.state = .held(epoch: epoch, validUntil: validUntil, renewAt: requestedAt.advanced(by: self.configuration.renewEvery), renewing: nil)
        return [.start(epoch: epoch)]
    }

    /// Another instance holds the lease: asked for again a retry period later.
    package mutating func taken(now: Instant) -> [Action] {
        guard case .acquiring = self.state else { return [] }
        self.state = .waiting(retryAt: now.advanced(by: self.configuration.retryEvery))
        return []
    }

    /// The renewal under way succeeded: good for another `ttl` from when it was asked.
    package mutating func renewed(now: Instant) -> [Action] {
        guard case .held(let epoch, let validUntil, _, let renewing?) = self.state else { return [] }
        let extended = renewing.advanced(by: self.configuration.ttl - self.configuration.margin)
        self.state = .held(
            epoch: epoch, validUntil: max(validUntil, extended), renewAt: renewing.advanced(by: self.configuration.renewEvery), renewing: nil
        )
        return []
    }

    /// The renewal was refused: the lease has another owner or epoch now. Stop at once.
    package mutating func renewalRefused(now: Instant) -> [Action] {
        guard case .held = self.state else { return [] }
        self.state = .waiting(retryAt: now.advanced(by: self.configuration.retryEvery))
        return [.fence]
    }

    /// The request under way got no answer (the database unreachable). A held lease stays
    /// usable until it was good for, and is renewed again at the next period.
    package mutating func requestFailed(now: Instant) -> [Action] {
        switch self.state {
        case .acquiring:
            self.state = .waiting(retryAt: now.advanced(by: self.configuration.renewEvery))
        case .held(let epoch, let validUntil, _, .some):
            self.state = .held(epoch: epoch, validUntil: validUntil, renewAt: now.advanced(by: self.configuration.renewEvery), renewing: nil)
        case .waiting, .held, .released:
            break
        }
        return []
    }

    /// Gives the lease back (SIGTERM, or over the fair share): work stops first. Asked for
    /// but not answered yet, a grant that comes still runs its ttl out (the database keeps
    /// it until then).
    package mutating func release() -> [Action] {
        let previous = self.state
        self.state = .released
        if case .held(let epoch, _, _, _) = previous { return [.fence, .release(epoch: epoch)] }
        return []
    }
}
