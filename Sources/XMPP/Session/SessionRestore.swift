import Foundation

/// Restoring a session after each (re)connect: carries out the steps
/// ``SessionRestoreStateMachine`` picks (stream management, carbons, the roster, presence,
/// online and the rooms, the archive catch-up, the in-doubt check; RFC 6121 §2.2, XEP-0198,
/// XEP-0280, XEP-0313) on its session.
enum SessionRestore<C: Clock> where C.Duration == Duration, C.Instant: Sendable {
    /// Runs the restore until it is done or the connection is gone.
    static func run(on connection: XMPPConnection, resumed: Bool, in session: isolated XMPPSession<C>) async {
        var restore = SessionRestoreStateMachine(
            configuration: .init(
                streamManagement: session.dependencies.configuration.streamManagement, carbons: session.dependencies.configuration.enableCarbons,
                roster: session.dependencies.configuration.fetchRoster, presence: session.own.presence != nil
            )
        )
        let offersStreamManagement = connection.features.elements.contains { $0.name == "sm" && $0.namespace == StreamManagementStateMachine.namespace }
        // What Bind 2 enabled in the login (XEP-0386) is not asked for again.
        var action = restore.connected(
            resumed: resumed, offersStreamManagement: offersStreamManagement, inDoubt: !session.archiveCheck.inDoubt.messages.isEmpty,
            streamManagementEnabled: connection.login.streamManagementAnswer != nil, carbonsEnabled: connection.login.carbonsEnabled
        )
        while case .run(let step) = action {
            let outcome = await Self.perform(step, on: connection, resumed: resumed, in: session)
            action = session.current.connection == nil || Task.isCancelled ? restore.connectionLost() : restore.stepFinished(outcome)
        }
    }

    /// Carries out one restore step.
    private static func perform(
        _ step: SessionRestoreStateMachine.Step, on connection: XMPPConnection, resumed: Bool, in session: isolated XMPPSession<C>
    ) async -> SessionRestoreStateMachine.Outcome {
        switch step {
        case .enableStreamManagement:
            let enable = session.streamManagement.machine.enable(resume: session.dependencies.configuration.resumesStreams)
            return (try? await session.transmit([enable], on: connection)) == nil ? .failed : .done
        case .discoverCarbons:
            let disco = IQ(type: .get, id: session.dependencies.ids.next(), to: try? JID(connection.jid.domainpart), payload: XMLElement(name: "query", namespace: EntityCapabilities.discoInfoNamespace))
            guard let info = try? await session.request(disco) else { return .failed }
            let offered = info.payload?.elements.contains { $0.name == "feature" && $0[attribute: "var"] == CarbonFilter.feature } == true
            return offered ? .carbonsOffered : .done
        case .enableCarbons:
            return (try? await session.request(IQ(type: .set, id: session.dependencies.ids.next(), payload: CarbonFilter.enableRequest()))) == nil ? .failed : .done
        case .fetchRoster:
            let versioning = connection.features.elements.contains { $0.namespace == Roster.versioningFeature }
            let query = Roster.query(version: session.machine.roster.version, versioning: versioning)
            // The machine applies the result when it arrives, in stream order with pushes.
            let fetch = IQ(type: .get, id: session.dependencies.ids.next(), payload: query)
            session.machine.rosterFetchSent(id: fetch.id)
            do {
                _ = try await session.request(fetch)
                // A resumed stream reported online before fetching: the roster's owners look again.
                if resumed { await session.emit(.rosterFetched) }
                return .done
            } catch XMPPSessionError.disconnected {
                // The connection's end is reported once, as "offline"; thousands of accounts
                // lose theirs together when their server restarts.
                session.dependencies.logger.debug("roster fetch cut off by the connection's end")
                return .failed
            } catch {
                session.dependencies.logger.warning("roster fetch failed", metadata: ["error": "\(error)"])
                return .failed
            }
        case .announcePresence:
            guard let presence = session.own.presence else { return .done }
            return (try? await session.announce(presence)) == nil ? .failed : .done
        case .reportOnline:
            session.current.reportedOnline(at: session.dependencies.clock.now)
            await session.emit(.online(connection.jid))
            await session.rooms.join(resumed: resumed, in: session)
            return .done
        case .catchUp:
            await session.catchUp.run(in: session)
            return .done
        case .checkInDoubt:
            await session.archiveCheck.checkInDoubt(on: connection, resumed: resumed, in: session)
            return .done
        }
    }
}
