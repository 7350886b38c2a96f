import TransportCore

/// Where one transport instance sends its events: the pipeline, tagged with the instance,
/// so late events from a transport a reload replaced cannot touch its successor.
package struct TransportEventSink: TransportEventHandler {
    package let pipeline: RelayPipeline<ContinuousClock>
    package let instance: UInt64

    package func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
        await self.pipeline.handle(event, from: transport, instance: self.instance)
    }

    package func barrier() async {
        await self.pipeline.barrier()
    }

    package init(pipeline: RelayPipeline<ContinuousClock>, instance: UInt64) {
        self.pipeline = pipeline
        self.instance = instance
    }
}
