import Foundation

/// The queries of an archive check: the archive's pages (XEP-0313 §4), and what the server
/// says of itself (XEP-0092 software version, XEP-0012 uptime).
extension SessionArchiveCheck {
    /// Runs one archive check to its end on `connection`: the machine as it finished and its
    /// last action; nil when the connection went meanwhile.
    func run(
        _ check: ArchiveCheckStateMachine, on connection: XMPPConnection, in session: isolated XMPPSession<C>
    ) async -> (ArchiveCheckStateMachine, ArchiveCheckStateMachine.Action)? {
        var check = check
        let key = session.nextID()
        var action = check.start(queryID: key)
        self.inDoubt.started(check, key: key)
        let timeout = session.dependencies.configuration.requestTimeout
        while let query = await self.query(for: action, on: connection, in: session) {
            let next: ArchiveCheckStateMachine.Action?
            do {
                let answer = try await session.request(query, timeout: timeout)
                let nextQueryID = session.nextID()
                next = self.inDoubt.update(key) { $0.answered(answer, nextQueryID: nextQueryID) } ?? nil
            } catch XMPPSessionError.stanzaError(let stanzaError) {
                let nextQueryID = session.nextID()
                next = self.inDoubt.update(key) { $0.failed("stanza error \(stanzaError)", error: stanzaError, nextQueryID: nextQueryID) } ?? nil
            } catch {
                let nextQueryID = session.nextID()
                next = self.inDoubt.update(key) { $0.failed("\(error)", error: nil, nextQueryID: nextQueryID) } ?? nil
            }
            guard let next else { break }
            action = next
        }
        let finished = self.inDoubt.finished(key)
        // Cancelled: the connection's task group is ending, so the connection is going.
        guard let finished, case .finished = action, session.current.connection === connection, !Task.isCancelled else { return nil }
        return (finished, action)
    }

    /// The request `action` asks for, after the wait a retry asks for; nil when the check is
    /// done, or `connection` went or the task was cancelled meanwhile.
    private func query(for action: ArchiveCheckStateMachine.Action, on connection: XMPPConnection, in session: isolated XMPPSession<C>) async -> IQ? {
        switch action {
        case .query(let query):
            return query
        case .retry(let query, let delay, let reason):
            guard session.current.connection === connection else { return nil }
            session.dependencies.logger.info("the archive could not answer for now; asking again", metadata: ["in": "\(delay)", "error": "\(reason)"])
            // Not cut short by a lost connection (at most a few seconds): looked at after.
            let clock = session.dependencies.clock
            try? await clock.sleep(until: clock.now.advanced(by: delay), tolerance: nil)
            return session.current.connection === connection && !Task.isCancelled ? query : nil
        case .finished:
            return nil
        }
    }

    /// The server's answer to `<query xmlns=namespace/>` (an IQ get to our domain), e.g.
    /// XEP-0092 software version or XEP-0012 uptime; nil when it gives none.
    private func queryServer(_ namespace: String, timeout: Duration, in session: isolated XMPPSession<C>) async -> XMLElement? {
        guard let domain = try? JID(session.machine.ownJID.domainpart) else { return nil }
        let query = IQ(type: .get, id: session.nextID(), to: domain, payload: XMLElement(name: "query", namespace: namespace))
        return (try? await session.request(query, timeout: timeout))?.payload
    }

    /// The server's software name: its XEP-0092 answer, else the name of its XEP-0030
    /// `server` identity (operators turn `mod_version` off; Prosody's and ejabberd's disco
    /// identities carry their names all the same). Nil when neither says.
    /// Asked once per server session (``software``).
    func serverSoftware(timeout: Duration, in session: isolated XMPPSession<C>) async -> String? {
        if let known = self.software { return known }
        let connection = session.current.connection
        let name = await self.askServerSoftware(timeout: timeout, in: session)
        // Kept only when the answers came on the connection still current.
        if connection != nil, session.current.connection === connection { self.software = .some(name) }
        return name
    }

    private func askServerSoftware(timeout: Duration, in session: isolated XMPPSession<C>) async -> String? {
        if let name = await self.queryServer("jabber:iq:version", timeout: timeout, in: session)?.firstChild(named: "name", namespace: "jabber:iq:version")?.text {
            return name
        }
        let info = await self.queryServer(EntityCapabilities.discoInfoNamespace, timeout: timeout, in: session)
        return info?.elements.first { $0.name == "identity" && $0[attribute: "category"] == "server" }?[attribute: "name"]
    }

    /// Whether the server may have started after this session's last connection was lost:
    /// its uptime (XEP-0012 §4, last activity of the server itself) is not longer than the
    /// time since. Servers count whole seconds, so one second of doubt counts as "may
    /// have" (never a missed restart; a server younger than two seconds more than the
    /// outage looks restarted). Nil when unknown (no loss in this process, or no answer).
    func serverRestartedSinceLoss(timeout: Duration, in session: isolated XMPPSession<C>) async -> Bool? {
        guard let lost = self.inDoubt.lossToCompare,
            let seconds = await self.queryServer("jabber:iq:last", timeout: timeout, in: session)?[attribute: "seconds"].flatMap({ Int64($0) })
        else { return nil }
        return Duration.seconds(seconds) < lost.duration(to: session.dependencies.clock.now) + .seconds(1)
    }
}
