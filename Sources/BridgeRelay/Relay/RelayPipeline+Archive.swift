import BridgeRouting
import BridgeState
import Foundation
import LocalArchive
import TransportCore

/// The local archive's questions to the pipeline (issue 25): retention and membership.
/// What a channel relays goes into the archive through ``ArchiveStage``.
extension RelayPipeline {
    /// Each archived channel's retention in days (0: for ever), for ``ArchiveKeeper``.
    package func archiveRetention() -> [String: Int] {
        var days: [String: Int] = [:]
        for channel in self.routing.router.channels where channel.archives { days[channel.name] = channel.archiveDays }
        return days
    }

    /// Whether `transport` is a member of `channel` now, in any direction: an HTTP
    /// ingress only posts (it has no output), and its token reads what it posts into.
    package func isMember(_ transport: String, of channel: String) -> Bool {
        self.routing.router.channels.contains { $0.name == channel && $0.members.contains { $0.endpoint.transport == transport } }
    }
}
