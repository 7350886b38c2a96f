import TransportCore

/// Where one transport instance sends its events: the pipeline, tagged with the instance,
/// so late events from a transport a reload replaced cannot touch its successor.
struct TransportEventSink: TransportEventHandler {
    let pipeline: RelayPipeline<ContinuousClock>
    let instance: UInt64

    func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.pipeline.handle(event, from: transport, instance: self.instance)
    }

    func barrier() async {
        await self.pipeline.barrier()
    }
}
