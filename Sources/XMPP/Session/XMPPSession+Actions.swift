extension XMPPSession {
    /// Carries out what ``SessionStateMachine`` decided for one inbound stanza.
    /// Not inlined into the read loop: its locals live in its own frame, popped after each
    /// action, not in the long-lived loop's (one per account).
    @inline(never)
    func perform(_ action: SessionStateMachine<C.Instant>.Action, on connection: XMPPConnection) async {
        switch action {
        case .send(let element):
            try? await self.transmit([element], on: connection)
        case .completeRequest(let id, let iq):
            guard let waiter = self.current.requests.removeValue(forKey: id) else { return }
            if iq.type == .error {
                waiter.complete(.failure(XMPPSessionError.stanzaError(iq.error ?? StanzaError(.undefinedCondition))))
            } else {
                waiter.complete(.success(iq))
            }
        case .emitMessage(let message, let carbon):
            await self.emit(.message(message, carbon: carbon))
        case .presenceChanged(let presence, let best):
            await self.emit(.presence(presence, best: best))
        case .subscriptionRequested(let from, let presence):
            await self.emit(.subscriptionRequest(from: from, presence))
        case .subscriptionChanged(let presence):
            await self.emit(.subscriptionChanged(presence))
        case .rosterChanged(let outcome):
            await self.emit(.rosterChanged(outcome))
        case .copyStanzaID(let room, let id, let stanzaID):
            await self.emit(.copyStanzaID(room: room, id: id, stanzaID: stanzaID))
        case .ignored(let reason):
            // Spoofed replies, forged carbons and strangers' roster pushes land here; a
            // stranger can send them at will, so: debug, plus a summary now and then.
            self.dependencies.logger.debug("ignored stanza", metadata: ["reason": "\(IgnoredStanzaLog<C.Instant>.describe(reason))"])
            if let summary = self.ignoredStanzas.ignored(reason, now: self.dependencies.clock.now) {
                self.dependencies.logger.notice(
                    "ignored stanzas (spoofed replies, forged carbons, strangers' roster pushes, …); each at debug level",
                    metadata: ["count": "\(summary.count)", "examples": "\(summary.examples.joined(separator: " | "))"]
                )
            }
        }
    }
}
