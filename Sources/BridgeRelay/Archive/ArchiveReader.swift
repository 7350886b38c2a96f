import BridgeState
import LocalArchive
import TransportCore

/// The archive as the HTTP ingress reads it (issue 25): a channel's page, only for a
/// local transport that is a member of that channel now, read on the journal's thread
/// (which sees everything relayed before the request).
package struct ArchiveReader<C: Clock>: ArchiveReading where C.Duration == Duration, C.Instant: Sendable {
    package let pipeline: RelayPipeline<C>

    package func read(_ query: ArchiveQuery, for reader: String) async throws -> ArchivePage? {
        guard let channel = query.channel, await self.pipeline.isMember(reader, of: channel) else { return nil }
        return try await self.pipeline.journal.read { store throws(StateStoreError) in try store.indexedAndRead(query) }
    }

    package init(pipeline: RelayPipeline<C>) {
        self.pipeline = pipeline
    }
}
