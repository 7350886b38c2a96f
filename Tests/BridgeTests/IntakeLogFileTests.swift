import Foundation
import Testing
import TestSupport

@testable import Bridge
@testable import BridgeState

/// The intake log (issue 21): records copied in by one process are what the next reads
/// back, in order across its two halves; a half is emptied once SQLite has it all; a torn
/// or stale record ends the reading.
@Suite("intake log file")
struct IntakeLogFileTests {
    typealias Position = IntakeLogFile.Position

    static func payload(_ index: Int, bytes: Int = 40) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &+ index) }
    }

    @discardableResult
    static func append(_ log: IntakeLogFile, _ payload: [UInt8]) -> Position? {
        log.append(payload, checksum: IntakeLogFile.checksum(payload))
    }

    @Test func recordsWrittenByOneInstanceReadBackInAnotherAfterAPosition() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.intake")
        var positions: [Position] = []
        do {
            let log = try IntakeLogFile(path: path, capacity: 4096)
            for index in 0..<3 { positions.append(try #require(Self.append(log, Self.payload(index, bytes: 13 + index)))) }
        }
        let reopened = try IntakeLogFile(path: path, capacity: 4096)
        #expect(reopened.records(after: nil).map(\.payload) == (0..<3).map { Self.payload($0, bytes: 13 + $0) })
        #expect(reopened.records(after: positions[0]).map(\.position) == Array(positions[1...]))
        #expect(reopened.records(after: positions[2]).isEmpty)
    }

    @Test func halvesTakeTurnsAndAnAppliedHalfIsEmptied() throws {
        let folder = try TemporaryFolder()
        let log = try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096)
        let first = try #require(Self.append(log, Self.payload(1)))
        #expect(log.rotate())
        let second = try #require(Self.append(log, Self.payload(2)))
        #expect(first < second)
        #expect(!log.rotate())  // the first half still holds an unapplied record
        #expect(log.records(after: nil).map(\.payload) == [Self.payload(1), Self.payload(2)])
        log.applied(through: first)
        #expect(log.records(after: nil).map(\.payload) == [Self.payload(2)])
        #expect(log.rotate())
        let third = try #require(Self.append(log, Self.payload(3)))
        #expect(second < third)
        #expect(try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096).records(after: first).map(\.payload) == [Self.payload(2), Self.payload(3)])
    }

    @Test func whenBothHalvesAreFullARecordIsRefusedAndNothingIsOverwritten() throws {
        let folder = try TemporaryFolder()
        let log = try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096)
        var positions: [Position] = []
        while let position = Self.append(log, Self.payload(positions.count, bytes: 1000)) { positions.append(position) }
        #expect(positions.count == 8)  // 24-byte record header + 1000 (8-aligned): 4 per half, and the full half turned over
        #expect(log.records(after: nil).map(\.payload) == (0..<8).map { Self.payload($0, bytes: 1000) })
        log.applied(through: positions[3])  // the first half is applied: room again
        #expect(Self.append(log, Self.payload(8, bytes: 1000)) != nil)
        #expect(log.records(after: nil).map(\.payload) == (4..<9).map { Self.payload($0, bytes: 1000) })
    }

    @Test func aResetInvalidatesEveryRecordAndNewOnesComeAfter() throws {
        let folder = try TemporaryFolder()
        let log = try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096)
        let old = try #require(Self.append(log, Self.payload(1)))
        log.rotate()
        Self.append(log, Self.payload(2))
        log.reset()
        #expect(log.usedBytes == 0)
        #expect(log.records(after: nil).isEmpty)
        let new = try #require(Self.append(log, Self.payload(3, bytes: 8)))
        #expect(old < new)
        #expect(try IntakeLogFile(path: folder.path("s.intake"), capacity: 4096).records(after: nil).map(\.payload) == [Self.payload(3, bytes: 8)])
    }

    @Test func aDamagedRecordEndsTheReadingThere() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.intake")
        do {
            let log = try IntakeLogFile(path: path, capacity: 4096)
            for index in 0..<3 { Self.append(log, Self.payload(index)) }
        }
        // Flip one payload byte of the second record (64-byte header, 24 + 40 per record).
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(64 + 64 + 24 + 5))
        try handle.write(contentsOf: [0xFF])
        try handle.close()
        #expect(try IntakeLogFile(path: path, capacity: 4096).records(after: nil).map(\.payload) == [Self.payload(0)])
    }

    @Test func anExistingLogKeepsItsCapacityAndJunkStartsEmpty() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.intake")
        do {
            let log = try IntakeLogFile(path: path, capacity: 4096)
            Self.append(log, Self.payload(1))
        }
        let reopened = try IntakeLogFile(path: path, capacity: 8192)
        #expect(reopened.capacity == 4096)
        #expect(reopened.records(after: nil).map(\.payload) == [Self.payload(1)])
        let junk = folder.path("junk.intake")
        try Data(repeating: 0xAB, count: 10_000).write(to: URL(fileURLWithPath: junk))
        #expect(try IntakeLogFile(path: junk, capacity: 4096).records(after: nil).isEmpty)
    }

    @Test func anUnopenablePathIsATypedError() {
        #expect(throws: IntakeLogError.self) { _ = try IntakeLogFile(path: "/nonexistent-folder/s.intake", capacity: 4096) }
    }
}
