import Foundation
import Testing

@testable import Bridge

/// The intake log (issue 21): records copied in by one process are what the next reads
/// back, until they are marked applied; a torn or stale record ends the reading.
@Suite("intake log file")
struct IntakeLogFileTests {
    static func payload(_ index: Int, bytes: Int = 40) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &+ index) }
    }

    @Test func recordsWrittenByOneInstanceReadBackInAnotherUntilApplied() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.intake")
        var ends: [Int] = []
        do {
            let log = try IntakeLogFile(path: path, capacity: 4096)
            for index in 0..<3 { ends.append(try #require(log.append(Self.payload(index, bytes: 13 + index)))) }
            log.applied(through: ends[0])
        }
        let reopened = try IntakeLogFile(path: path, capacity: 4096)
        #expect(reopened.unapplied() == [Self.payload(1, bytes: 14), Self.payload(2, bytes: 15)])
        reopened.applied(through: ends[2])
        #expect(reopened.unapplied().isEmpty)
    }

    @Test func aResetInvalidatesEveryRecordAndNewOnesFollow() throws {
        let folder = try TemporaryFolder()
        let log = try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096)
        let end = try #require(log.append(Self.payload(1)))
        #expect(!log.resetIfApplied())  // one record is not applied yet
        log.applied(through: end)
        #expect(log.resetIfApplied())
        #expect(log.usedBytes == 0)
        _ = try #require(log.append(Self.payload(2, bytes: 8)))
        // The old, longer record's bytes are still behind the new one: never read back.
        #expect(try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096).unapplied() == [Self.payload(2, bytes: 8)])
    }

    @Test func aRecordThatDoesNotFitIsRefusedAndNothingIsOverwritten() throws {
        let folder = try TemporaryFolder()
        let log = try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096)
        var written = 0
        while log.append(Self.payload(written, bytes: 1000)) != nil { written += 1 }
        #expect(written == 4)  // 24-byte record header + 1000 (8-aligned): 1024 each
        #expect(log.unapplied().count == written)
        #expect(log.append([1]) == nil)
        #expect(log.unapplied() == (0..<4).map { Self.payload($0, bytes: 1000) })
    }

    @Test func aDamagedRecordEndsTheReadingThere() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.intake")
        do {
            let log = try IntakeLogFile(path: path, capacity: 4096)
            for index in 0..<3 { _ = try #require(log.append(Self.payload(index))) }
        }
        // Flip one payload byte of the second record (64-byte header, 24 + 40 per record).
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(64 + 64 + 24 + 5))
        try handle.write(contentsOf: [0xFF])
        try handle.close()
        #expect(try IntakeLogFile(path: path, capacity: 4096).unapplied() == [Self.payload(0)])
    }

    @Test func aFileOfAnotherCapacityOrNoLogAtAllStartsEmpty() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.intake")
        do {
            let log = try IntakeLogFile(path: path, capacity: 4096)
            _ = try #require(log.append(Self.payload(1)))
        }
        #expect(try IntakeLogFile(path: path, capacity: 8192).unapplied().isEmpty)
        let junk = folder.path("junk.intake")
        try Data(repeating: 0xAB, count: 10_000).write(to: URL(fileURLWithPath: junk))
        #expect(try IntakeLogFile(path: junk, capacity: 4096).unapplied().isEmpty)
    }

    @Test func anUnopenablePathIsATypedError() {
        #expect(throws: IntakeLogError.self) { _ = try IntakeLogFile(path: "/nonexistent-folder/s.intake", capacity: 4096) }
    }
}
