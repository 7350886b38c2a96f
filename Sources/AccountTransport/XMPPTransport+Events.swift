import OMEMO
import XMPP

/// How an account takes the events its session read (RFC 6120 §4, XEP-0198 §4): the
/// events read together as one batch, its encrypted messages opened back to back
/// (XEP-0384 v0.3), each event handed to the bridge in order, and the server told what
/// was handled once it is durable.
extension XMPPTransport {
    /// At most this many events the session read together are taken as one batch.
    static let readTogether = 32

    /// Takes `batch` in order. The encrypted messages at its head are opened first, back
    /// to back (one device's work costs less than interleaved with the relay's); what must
    /// follow one (a new session to the journal, a key transport) is done right after it
    /// is relayed, when no message after it was opened yet: the keys handed to the journal
    /// then moved past no message that is not in the journal before them. At the batch's
    /// end, if the burst ended or 64 messages wait: OMEMO's keys to the journal, the
    /// barrier, then one acknowledgement (XEP-0198) for the messages handled.
    func take(_ batch: [XMPPSessionEvent], handled: inout [UInt32]) async {
        let (opened, followUps) = self.omemoArrivals(batch)
        for (index, event) in batch.enumerated() {
            await self.forward(event, opened: opened[index])
            // The device's keys that moved past this message: after its entries.
            await self.omemoFollowUp(followUps[index])
            if case .message(let message, _) = event, let number = message.streamNumber {
                handled.append(number)
            }
        }
        let burstEnded = !self.session.events.hasBuffered
        if !handled.isEmpty, burstEnded || handled.count >= 64 {
            // OMEMO keys the messages moved, handed over before the barrier waits.
            await self.omemoFlushIfDue()
            await self.handler.barrier()
            await self.session.handled(handled)
            handled.removeAll(keepingCapacity: true)
        } else if handled.isEmpty, burstEnded {
            // Without stream management nothing is acknowledged: OMEMO keys the messages
            // moved go to the journal at the end of a burst.
            await self.omemoFlushIfDue()
        }
    }

    /// Takes the events that wait, batch by batch (``take(_:handled:)``), in the drain's
    /// task (``Drain``), which ends with them: taking an event runs the relay's
    /// deepest path (tens of KB of async frames in a release build), and a task keeps the
    /// largest stack it ever ran for life.
    func takeBuffered() async {
        let events = self.session.events
        var handled = self.unacknowledged.withLockedValue { $0 }
        while let first = events.nextBuffered() {
            var batch = [first]
            while batch.count < Self.readTogether, let next = events.nextBuffered() { batch.append(next) }
            await self.take(batch, handled: &handled)
        }
        self.unacknowledged.withLockedValue { $0 = handled }
    }

    /// The encrypted messages at the head of `batch` opened in this turn on the device's
    /// loop: the arrival of each at its index, and what must follow it. It stops after a
    /// message that needs a follow-up, and at an event that may change the device's view
    /// (not a message, or a PEP notification): those and what comes after them are opened
    /// when they are forwarded, as one by one. Plain messages, carbons, bounces and
    /// receipts are passed over (``forward(_:opened:)`` takes them as they are).
    func omemoArrivals(_ batch: [XMPPSessionEvent]) -> ([OMEMOArrival?], [AccountOMEMO.FollowUp?]) {
        var arrivals = [OMEMOArrival?](repeating: nil, count: batch.count)
        var followUps = [AccountOMEMO.FollowUp?](repeating: nil, count: batch.count)
        guard let omemo = self.omemo.withLockedValue({ $0 }) else { return (arrivals, followUps) }
        for (index, event) in batch.enumerated() {
            guard case .message(let message, let carbon) = event, !message.extensions.contains(where: { $0.name == "event" }) else { break }
            guard carbon == nil, Self.opensAhead(message, account: self.name) else { continue }
            guard let (opening, followUp) = omemo.openingInTurn(of: message) else { break }
            arrivals[index] = Self.arrival(opening, of: message)
            if !followUp.isEmpty {
                followUps[index] = followUp
                break
            }
        }
        return (arrivals, followUps)
    }

    /// Whether `message` is one ``forward(_:opened:)`` hands to the device: a chat or
    /// normal message with `<encrypted/>`, not a bounce, not a receipt.
    static func opensAhead(_ message: Message, account: String) -> Bool {
        (message.type == .chat || message.type == .normal) && message.extensions.contains(where: { $0.name == "encrypted" })
            && Self.receipt(in: message, account: account) == nil
    }
}
