import NIOCore

/// Gives back the XML parsers and TLS buffers of an event loop's connections that read
/// nothing for a while (issue 43: an idle account holds neither). One per event loop
/// (``IdleTrimSweeps``), with one repeating timer of that loop while it has members: a
/// connection joins at a read while it holds a parser, and a tick trims those that read
/// nothing since the tick before the last, one to two periods after their last read. No
/// timer per connection: each would cost the loop's timer heap an insertion and a removal.
///
/// Not thread-safe: used on its event loop only.
final class IdleTrimSweep {
    let eventLoop: any EventLoop
    let period: TimeAmount
    /// Counts the ticks; a read is stamped with it.
    private(set) var generation = 0
    private var members: [any IdleTrimMember] = []
    private var timer: RepeatedTask?

    /// How many connections wait for a tick.
    var count: Int { self.members.count }

    init(eventLoop: any EventLoop, period: TimeAmount) {
        self.eventLoop = eventLoop
        self.period = period
    }

    deinit {
        self.timer?.cancel()
    }

    /// `member` read while holding no place here: it joins; the timer starts if it was the
    /// first.
    func add(_ member: any IdleTrimMember) {
        self.eventLoop.preconditionInEventLoop()
        self.members.append(member)
        guard self.timer == nil else { return }
        let sweep = NIOLoopBound(self, eventLoop: self.eventLoop)
        self.timer = self.eventLoop.scheduleRepeatedTask(initialDelay: self.period, delay: self.period) { _ in
            sweep.value.tick()
        }
    }

    /// The timer fired: trims the members that read nothing for a whole period; the timer
    /// stops when none is left.
    func tick() {
        self.generation += 1
        let quietSince = self.generation - 1
        self.members.removeAll { $0.trimForSweep(quietSince: quietSince) }
        if self.members.isEmpty {
            self.timer?.cancel()
            self.timer = nil
        }
    }
}
