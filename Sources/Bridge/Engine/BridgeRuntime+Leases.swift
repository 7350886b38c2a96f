import BridgeState
import Foundation

/// Several instances on one state (issue 26): the transports this instance runs only while
/// it holds their lease, started and stopped by the ``LeaseKeeper``.
extension BridgeRuntime {
    /// The transports worked on under a lease: accounts, gateways, and FIFO, socket and
    /// stdio locals. HTTP ingress runs on every instance (each commits to the shared queue).
    package static func leasedNames(_ configuration: BridgeConfiguration) -> [String] {
        Self.transportNames(configuration).filter { configuration.locals[$0]?.kind != .http }
    }

    /// Whether `name` is leased and does not run here: another instance's (or nobody's yet).
    package func runsElsewhere(_ name: String, in configuration: BridgeConfiguration? = nil) -> Bool {
        self.leases != nil && self.transports[name] == nil && Self.leasedNames(configuration ?? self.currentConfiguration).contains(name)
    }

    /// The leased transports of the configuration running now.
    package func leasedNames() -> [String] {
        Self.leasedNames(self.currentConfiguration)
    }

    /// For the metrics, with several instances (nil without leases): the leased transports
    /// running here, and from the lease rows (nil when the state does not answer) those
    /// no instance runs and the instances alive.
    package func leaseCounts() async -> (held: Int, unowned: Int?, alive: Int?)? {
        guard self.leases != nil else { return nil }
        let names = Self.leasedNames(self.currentConfiguration)
        let held = names.count { self.transports[$0] != nil }
        guard let view = await self.clusterView?() else { return (held, nil, nil) }
        return (held, names.count { view.owners[$0] == nil }, view.instances.count(where: \.alive))
    }

    /// The lease on `name` was granted: its queue and deduplication keys are read from the shared
    /// state, then it starts; an account first looks up in its archive what of its queue a
    /// former owner may have sent (``InheritedDeliveries``). False when it cannot (the state out of reach, no such
    /// transport): the lease goes back.
    /// `formerOwnerSilence`: how long ago a former owner last renewed the lease.
    package func takeOver(_ name: String, formerOwnerSilence: Duration? = nil) async -> Bool {
        guard Self.leasedNames(self.currentConfiguration).contains(name) else { return false }
        do {
            var inherited = try await self.relay.adopt(name)
            if let silence = formerOwnerSilence { inherited?.lostSince = Date(timeIntervalSinceNow: -silence.seconds) }
            // Only an account's session looks them up.
            if self.currentConfiguration.accounts[name] != nil { self.inherited[name] = inherited }
        } catch {
            self.logger.error("cannot take the transport over: its queue cannot be read", metadata: ["transport": "\(name)", "error": "\(error)"])
            return false
        }
        await self.restart(name, wanted: true)
        return self.transports[name] != nil
    }

    /// The lease on `name` is lost or about to be given back: the transport stops here (its
    /// batch in flight answered, its commits made), and what it held stays queued for the
    /// next owner.
    package func handBack(_ name: String, lost: Bool) async {
        if self.transports[name] != nil {
            self.logger.notice(lost ? "lease lost; transport stopped here" : "lease given back; transport stopped here", metadata: ["transport": "\(name)"])
        }
        self.inherited.removeValue(forKey: name)
        await self.restart(name, wanted: false)
        await self.relay.disown(name)
    }

    /// Another instance's control command (``ControlNotice``): what falls to this one.
    package func heard(_ notice: ControlNotice) async {
        switch notice {
        case .routesChanged:
            await self.refreshRouter()
            self.logger.info("routes changed on another instance; read again")
        case .reconnect(let name):
            guard self.transports[name] != nil else { return }
            self.logger.notice("reconnecting, as asked on another instance", metadata: ["transport": "\(name)"])
            await self.restart(name, wanted: true)
        case .retry(let sequences):
            _ = await self.relay.retryQueued(sequences)
        case .drop(let sequences):
            _ = await self.relay.dropQueued(sequences)
        }
    }
}
