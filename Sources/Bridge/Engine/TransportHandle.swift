import Transports

/// The event handler one transport instance gets: it tags events with the instance, so
/// late events from a transport a reload replaced cannot touch its successor.
struct TransportHandle: TransportEventHandler {
    let engine: BridgeEngine
    let instance: UInt64

    func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.engine.handle(event, from: transport, instance: self.instance)
    }
}
