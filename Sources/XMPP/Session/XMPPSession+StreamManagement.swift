import Foundation

/// Stream management (XEP-0198) as the session's callers see it; the work is
/// ``SessionStreamManagement``'s. Every stanza goes out through ``transmit(_:on:)``.
extension XMPPSession {
    /// Writes stanzas (and SM elements) in order with one flush, numbering the stanzas
    /// while stream management counts.
    ///
    /// Each number goes to the ledger with its id before the write, so a process killed
    /// right after it resumes knowing which ids the server's `h` covers, instead of sending
    /// them twice (XEP-0198 §5). Nothing is awaited between numbering and handing the
    /// elements to the channel, whose writes keep their order: the wire order is the
    /// numbering order.
    func transmit(_ elements: [XMLElement], on connection: XMPPConnection) async throws {
        self.prepareTransmit(elements)
        try await connection.send(elements)
    }

    /// What goes before `elements` are written, at once: their stanzas numbered (the ledger
    /// told first) and the watchdog armed for an `<r/>` riding last. ``transmit(_:on:)``
    /// does both. Only elements without stanzas (the keepalive's `<r/>`) may be written
    /// beside, in a spawned task: numbered stanzas must reach the channel in their order.
    func prepareTransmit(_ elements: [XMLElement]) {
        let ledger = self.dependencies.configuration.ledger
        for element in elements where element.isStanza {
            if let number = self.streamManagement.machine.stanzaSent(element) { ledger?.sent(number, id: element[attribute: "id"]) }
        }
        // An `<r/>` rides last in a batch; the watchdog times its answer.
        if let last = elements.last, last.name == "r", last.namespace == StreamManagementStateMachine.namespace {
            self.streamManagement.watchdogRequested(in: self)
        }
    }

    /// The consumer is done with these inbound messages (``Message/streamNumber``), durably
    /// for the bridge (committed with their numbers); with stream management the server is
    /// told, once for all of them.
    @_specialize(exported: true, where C == EventLoopClock)
    public func handled(_ numbers: [UInt32]) async {
        await self.streamManagement.handled(numbers, in: self)
    }

    /// Sends messages and returns once the server has taken them: by its stream management
    /// acknowledgement when enabled (one `<r/>` for the batch), else by a ping round trip
    /// (the server handles a stream in order). `written` is called once, when the messages
    /// are handed to the connection (or could not be), before the acknowledgement is awaited.
    @_specialize(exported: true, where C == EventLoopClock)
    public func sendAcknowledged(_ messages: [Message], written: @escaping @Sendable () -> Void = {}) async throws {
        try await self.streamManagement.sendAcknowledged(messages, written: written, in: self)
    }

    /// Returns once the server has taken everything sent so far: by a stream management
    /// acknowledgement when enabled, else by a ping round trip.
    @_specialize(exported: true, where C == EventLoopClock)
    public func waitForAcknowledgement() async throws {
        try await self.streamManagement.waitForAcknowledgement(in: self)
    }

    /// Closes the connection at once (no stream close handshake); the session treats it as
    /// a lost connection and reconnects. For a server that stopped reading.
    @_specialize(exported: true, where C == EventLoopClock)
    public func dropConnection() async {
        await self.current.connection?.abort()
    }

    /// Closes the connection at once, as ``dropConnection()``, when it has been online for
    /// all of the last `timeout`: for a delivery the server did not take in that time.
    /// Returns whether it did. A connection that is still being taken over (resumed, or its
    /// messages in doubt looked up in the archive), or is online for less, is left alone:
    /// the delivery waited for the take-over (new messages wait for "online") and went out
    /// after it, where the acknowledgement watchdog times it; dropping it would only start
    /// the take-over and its archive check again, and again for every batch that waited.
    @_specialize(exported: true, where C == EventLoopClock)
    public func dropStalledConnection(notTakenFor timeout: Duration) async -> Bool {
        guard let since = self.current.onlineSince, since.advanced(by: timeout) <= self.dependencies.clock.now,
            let connection = self.current.connection
        else { return false }
        await connection.abort()
        return true
    }
}
