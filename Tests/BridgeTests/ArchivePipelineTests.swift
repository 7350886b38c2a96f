import Foundation
import LocalArchive
import Logging
import TestSupport
import Testing
import TransportCore
import XMPP

@testable import Bridge
@testable import BridgeRelay
@testable import BridgeRouting
@testable import BridgeState

/// The local archive on the relay path (issue 25): what a channel relays is archived in
/// the relay's own commit, as the sender wrote it, with its copies' ids; a correction and
/// a retraction change the entry; receipts are not messages; a channel can opt out; the
/// pruner keeps each channel's retention on the manual clock.
@Suite("Archive through the relay pipeline")
struct ArchivePipelineTests {
    let folder = try! TemporaryFolder()
    static let alice = Endpoint(transport: "work", address: "alice@example.org")
    static let bob = Endpoint(transport: "home", address: "bob@example.net")
    static let carol = Endpoint(transport: "home", address: "carol@example.net")

    static func link(archives: Bool = true, days: Int = 90) -> RelayChannel {
        var channel = RelayChannel(
            name: "link", members: [ChannelMember(endpoint: alice, direction: .inout), ChannelMember(endpoint: bob, direction: .inout)], format: "{nick}: {body}",
            passesReceipts: true
        )
        channel.archives = archives
        channel.archiveDays = days
        return channel
    }

    static var quiet: RelayChannel {
        var channel = RelayChannel(name: "quiet", members: [ChannelMember(endpoint: carol, direction: .in), ChannelMember(endpoint: bob, direction: .out)])
        channel.archives = false
        return channel
    }

    func pipeline(_ store: SQLiteStateStore, _ journal: Journal, filters: [String: ChannelFilter] = [:]) -> RelayPipeline<ManualClock> {
        RelayPipeline(
            router: Router(channels: [Self.link(), Self.quiet], ownJIDs: [], filters: filters), journal: journal, ids: StanzaIDGenerator(prefix: "test"), idPrefix: "test", clock: ManualClock(), logger: Logger(label: "pipeline-test"), finish: {}
        )
    }

    static func message(_ body: String?, id: String, from source: Endpoint = alice, _ content: MessageContent = MessageContent()) -> InboundMessage {
        var message = InboundMessage(source: source, sender: "\(source.address ?? "")/phone", nick: "Alice", id: id, body: body)
        message.content = content
        return message
    }

    @Test("a relayed message is archived once, as written (before the channel's replace), with its copy's id; a correction edits it, a retraction empties it; receipts and a channel with archive = false leave nothing")
    func archivedAndEdited() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        var filter = ChannelFilter()
        filter.replace = [(try ChannelFilter.Pattern("password=\\S+"), "password=***")]
        let pipeline = self.pipeline(store, journal, filters: ["link": filter])
        try await pipeline.load(from: store)
        #expect(await pipeline.handle(.message(Self.message("login password=hunter2 works", id: "a-1")), from: "work") == .accepted)
        #expect(await pipeline.handle(.message(Self.message("second", id: "a-2")), from: "work") == .accepted)
        #expect(await pipeline.handle(.message(Self.message("from carol", id: "c-1", from: Self.carol)), from: "home") == .accepted)
        let copy = try #require(try store.relays(forSource: "work", address: Self.alice.address, id: "a-1").first)
        _ = await pipeline.handle(.receipt(DeliveryReceipt(relayID: copy.relayID, from: Self.bob, displayed: false)), from: "home")
        await journal.flushed()
        #expect(try store.loadQueue().first { $0.delivery.sourceID == "a-1" }?.delivery.body == "Alice: login password=*** works")

        var page = try store.archived(ArchiveQuery())
        #expect(page.messages.map(\.body) == ["second", "login password=hunter2 works"], "newest first; carol's channel keeps none; the receipt is no message")
        let first = try #require(page.messages.last)
        #expect(first.channel == "link" && first.source == Self.alice && first.sender == "alice@example.org/phone" && first.nick == "Alice")
        #expect(first.copies == [ArchivedMessage.Copy(target: Self.bob, id: copy.relayID)])
        #expect(first.editedAt == nil && first.retractedAt == nil && !first.bridgeMade)

        // Indexed before the correction: the trigger swaps the indexed text.
        try store.indexArchive()
        #expect(try store.indexedAndRead(ArchiveQuery(search: "hunter2")).messages.map(\.sourceID) == ["a-1"])
        #expect(await pipeline.handle(.message(Self.message("login works now", id: "a-3", MessageContent(replaceID: "a-1"))), from: "work") == .accepted)
        #expect(await pipeline.handle(.message(Self.message(nil, id: "a-4", MessageContent(retractID: "a-2"))), from: "work") == .accepted)
        await journal.flushed()
        page = try store.archived(ArchiveQuery())
        #expect(page.messages.count == 2, "a correction and a retraction are no entries of their own")
        #expect(page.messages.last?.body == "login works now" && page.messages.last?.editedAt != nil)
        #expect(page.messages.first?.body == "" && page.messages.first?.retractedAt != nil)
        #expect(try store.indexedAndRead(ArchiveQuery(search: "hunter2")).messages.isEmpty, "the corrected text left the index")
        #expect(try store.indexedAndRead(ArchiveQuery(search: "works")).messages.map(\.sourceID) == ["a-1"])
        try Self.checkIndex(store)
        await journal.shutdown()
    }

    /// FTS5's own check that the index holds exactly the archive's text.
    static func checkIndex(_ store: SQLiteStateStore) throws {
        try store.indexArchive()
        try store.write(.indexArchive) { db in try db.execute(sql: "INSERT INTO archive_text (archive_text, rank) VALUES ('integrity-check', 1)") }
    }

    @Test("every archiveIndexBatch archived messages a relay commit also gives the index its batch; nothing is indexed one commit at a time")
    func indexedInBatches() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let pipeline = self.pipeline(store, journal)
        try await pipeline.load(from: store)
        func indexed() throws -> Int64 { try store.read(.readArchive) { db in try Int64.fetchOne(db, sql: "SELECT through FROM archive_indexed") ?? -1 } }
        let batch = ArchiveStage.archiveIndexBatch
        for index in 0..<(batch - 1) { _ = await pipeline.handle(.message(Self.message("m \(index)", id: "a-\(index)")), from: "work") }
        await journal.flushed()
        #expect(try indexed() == 0)
        _ = await pipeline.handle(.message(Self.message("the last of the batch", id: "a-last")), from: "work")
        await journal.flushed()
        #expect(try indexed() == Int64(batch))
        try Self.checkIndex(store)
        await journal.shutdown()
    }

    @Test("what the bridge says itself is archived as bridge-made: the notice to the sender of an encrypted message, with its copy")
    func bridgeMadeNotice() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let pipeline = self.pipeline(store, journal)
        try await pipeline.load(from: store)
        _ = await pipeline.handle(.message(Self.message("I sent you an OMEMO message", id: "a-1", MessageContent(encryption: "OMEMO"))), from: "work")
        await journal.flushed()
        let archived = try store.archived(ArchiveQuery()).messages
        #expect(archived.count == 1)
        let notice = try #require(archived.first)
        #expect(notice.bridgeMade && notice.channel == "link" && notice.body.hasPrefix("This bridge cannot relay messages encrypted with OMEMO"))
        #expect(notice.copies.map(\.target) == [Self.alice] && notice.sender == "xmpp-bridge")
        await journal.shutdown()
    }

    @Test("ids are never reused: after every row was pruned a new message gets a new id, the index takes it, and its correction keeps the index whole")
    func idsAfterAFullPrune() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let old = Date(timeIntervalSince1970: 1_000_000_000)
        try await journal.commit((0..<3).map { .archive(ArchivedMessage(at: old, channel: "link", source: Self.alice, sender: "a", nick: "A", sourceID: "o-\($0)", body: "old \($0)")) })
        try store.indexArchive()
        let first = try store.archived(ArchiveQuery()).messages.map(\.number).max() ?? 0
        try await journal.commit([.pruneArchive(channel: "link", before: Date(), limit: 100)])
        let now = Date()
        try await journal.commit([
            .archive(ArchivedMessage(at: now, channel: "link", source: Self.alice, sender: "a", nick: "A", sourceID: "n-1", body: "fresh words")),
        ])
        try store.indexArchive()
        try await journal.commit([.archiveEdit(channels: ["link"], source: Self.alice, nick: nil, sourceID: "n-1", body: "fresher words", at: now)])
        await journal.flushed()
        let fresh = try store.indexedAndRead(ArchiveQuery(search: "fresher")).messages
        #expect(fresh.count == 1 && (fresh.first?.number ?? 0) > first)
        try Self.checkIndex(store)
        await journal.shutdown()
    }

    @Test("the archive entry survives kill -9 through the intake log: it rides in the relay's own record, with no commit of its own")
    func archiveRidesTheIntakeLog() async throws {
        let path = self.folder.path("state.sqlite")
        let clock = ManualClock()
        let crashed = try Journal(store: try SQLiteStateStore(path: path), log: try IntakeLogFile(path: path + ".intake"), clock: clock, logger: Logger(label: "journal-test"))
        let pipeline = RelayPipeline(
            router: Router(channels: [Self.link()], ownJIDs: []), journal: crashed,
            ids: StanzaIDGenerator(prefix: "test"), idPrefix: "test", clock: clock, logger: Logger(label: "pipeline-test"), finish: {}
        )
        var message = Self.message("durable at once", id: "a-1")
        message.awaitsCommit = true
        #expect(await pipeline.handle(.message(message), from: "work") == .accepted)
        await clock.waitForSleepers(1)
        #expect(crashed.commitCount == 0, "answered from the intake log, before any SQLite commit")
        // The next process: the crashed journal never ran its commit.
        let store = try SQLiteStateStore(path: path)
        let restarted = try Journal(store: store, log: try IntakeLogFile(path: path + ".intake"), logger: Logger(label: "journal-test"))
        let replayed = try #require(try store.archived(ArchiveQuery()).messages.first)
        #expect(replayed.body == "durable at once" && replayed.sourceID == "a-1" && replayed.channel == "link")
        #expect(replayed.sender == message.sender && replayed.nick == message.nick && replayed.source == Router.normalized(message.source))
        #expect(replayed.copies.count == 1 && replayed.copies.first?.id.isEmpty == false, "the copy's id, read back from the log's row")
        await restarted.shutdown()
    }

    @Test("the pruner forgets, on the manual clock, what is older than each channel's archive_days, in batches; 0 keeps everything")
    func pruneOnTheManualClock() async throws {
        let store = try SQLiteStateStore(path: self.folder.path("state.sqlite"))
        let journal = try Journal(store: store, logger: Logger(label: "journal-test"))
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var entries: [JournalEntry] = []
        for day in 0..<10 {
            for channel in ["short", "forever"] {
                entries.append(
                    .archive(
                        ArchivedMessage(
                            at: start.addingTimeInterval(Double(day) * 86_400), channel: channel, source: Self.alice, sender: "alice@example.org", nick: "Alice",
                            sourceID: "\(channel)-\(day)", body: "day \(day)"
                        )
                    )
                )
            }
        }
        try await journal.commit(entries)
        let clock = ManualClock()
        let now = { @Sendable in start.addingTimeInterval(9 * 86_400 + clock.now.offset.seconds) }
        let pruner = ArchiveKeeper(
            journal: journal, retention: { ["short": 3, "forever": 0] }, clock: clock, interval: .seconds(3600), batch: 2, now: now,
            logger: Logger(label: "pruner-test")
        )
        let service = Task { try? await pruner.run() }
        // At start: older than 3 days before day 9 (days 0 to 5) go.
        await clock.waitForSleepers()
        #expect(try store.archived(ArchiveQuery(channel: "short")).messages.map(\.body) == ["day 9", "day 8", "day 7", "day 6"])
        // A day later, the next hourly runs take day 6.
        for _ in 0..<24 {
            clock.advance(by: .seconds(3600))
            await clock.waitForSleepers()
        }
        #expect(try store.archived(ArchiveQuery(channel: "short")).messages.map(\.body) == ["day 9", "day 8", "day 7"])
        #expect(try store.archived(ArchiveQuery(channel: "forever", limit: 100)).messages.count == 10)
        #expect(try store.indexedAndRead(ArchiveQuery(search: "day")).messages.count == 13, "the index lost the pruned rows too")
        try Self.checkIndex(store)
        service.cancel()
        await service.value
        await journal.shutdown()
    }
}
