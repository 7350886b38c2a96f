#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import Synchronization

/// The journal's intake log: a memory-mapped file where a group of journal entries is
/// durable the moment it is copied in, before the SQLite commit that applies it.
///
/// Copying a record is a `memcpy` into a shared file mapping: no system call, no thread
/// hop. The kernel keeps the pages when the process dies, so after `kill -9` the records
/// not yet applied to SQLite are read back and applied before anything else runs. A host
/// crash can lose pages not yet written back, as it can lose SQLite's last WAL frames with
/// `synchronous = NORMAL`: both give the same promise (see docs/nothing-lost.md, "The journal and the intake log").
///
/// Two halves are used in turn, so a busy bridge never waits for the log to drain: records
/// go to the active half; the journal turns to the other (``rotate()``) each time it takes
/// a group to commit, and a half whose records are all applied is emptied. Each half has an
/// **epoch**, one more than the half before it; a record's ``Position`` (epoch, end) orders
/// every record ever written. SQLite stores the position it has applied through in the same
/// transaction (the journal does), so replaying after a crash applies exactly the records
/// SQLite lacks.
///
/// Layout (native byte order): a 64-byte header (magic, capacity per half, active half, each
/// half's epoch, 0 when empty), then the two halves, `capacity` bytes each. A record, 8-byte
/// aligned: payload length (u32), reserved (u32), epoch (u64), FNV-1a checksum of the payload
/// (u64), payload. A record is valid only with its half's epoch and a matching checksum:
/// reading stops at the first that is not.
///
/// This file owns the mapping; no pointer leaves it. Each call takes the file's lock.
package final class IntakeLogFile: @unchecked Sendable {
    /// Where a record ends, ordered across halves by epoch.
    package struct Position: Hashable, Comparable, Sendable {
        package var epoch: UInt64
        package var end: Int

        package static func < (lhs: Position, rhs: Position) -> Bool {
            (lhs.epoch, lhs.end) < (rhs.epoch, rhs.end)
        }

        package init(epoch: UInt64, end: Int) {
            self.epoch = epoch
            self.end = end
        }
    }

    package static let defaultCapacity = 4 << 20
    package static let headerBytes = 64
    package static let recordHeaderBytes = 24
    private static let magic: UInt64 = 0x3230_4B41_544E_4958  // "XINTAK02"

    private enum Offset {
        static let magic = 0, capacity = 8, active = 16
        static func epoch(_ half: Int) -> Int { 24 + 8 * half }
    }

    package let path: String
    /// Bytes per half.
    package let capacity: Int
    private let base: UnsafeMutableRawPointer
    private let size: Int
    private let lock = NIOLock()
    /// Where the next record of each half goes (the end of its valid records).
    private var ends: [Int] = [0, 0]
    /// How far SQLite has applied, as last told (``applied(through:)``).
    private var appliedThrough: Position?

    /// Opens (creating it if needed) the log at `path`. An existing log keeps the capacity it
    /// was made with (`capacity` applies to a new one), so its records are never cut off.
    package init(path: String, capacity: Int = IntakeLogFile.defaultCapacity) throws(IntakeLogError) {
        precondition(capacity >= 4096, "an intake log needs room for records")
        self.path = path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw IntakeLogError(path: path, operation: .open, errno: errno) }
        defer { close(descriptor) }
        var header = [UInt64](repeating: 0, count: 2)
        let read = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 16, 0) }
        let existing = read == 16 && header[0] == Self.magic ? Int(exactly: header[1]) : nil
        let kept = existing.map { $0 >= 4096 && $0 <= 1 << 30 } ?? false
        self.capacity = kept ? existing! : capacity
        self.size = Self.headerBytes + 2 * self.capacity
        guard ftruncate(descriptor, off_t(self.size)) == 0 else { throw IntakeLogError(path: path, operation: .resize, errno: errno) }
        #if canImport(Glibc)
        // Blocks reserved now: a store into a page the full disk cannot back would be SIGBUS.
        let reserved = posix_fallocate(descriptor, 0, off_t(self.size))
        guard reserved == 0 else { throw IntakeLogError(path: path, operation: .reserve, errno: reserved) }
        #endif
        guard let mapped = mmap(nil, self.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            throw IntakeLogError(path: path, operation: .map, errno: errno)
        }
        self.base = mapped
        if !kept {
            memset(self.base, 0, Self.headerBytes)
            self.store(UInt64(self.capacity), Offset.capacity)
            // Not 1: records left by an earlier file of another layout must never match.
            self.store(UInt64.random(in: 1...(UInt64.max >> 2)), Offset.epoch(0))
            atomicMemoryFence(ordering: .releasing)
            self.store(Self.magic, Offset.magic)
        }
        for half in 0..<2 { self.ends[half] = self.scan(half).end }
    }

    deinit {
        munmap(self.base, self.size)
    }

    /// Copies `payload` in as one record; returns its position, or nil when neither half
    /// has room for it (the caller then waits for SQLite instead).
    package func append(_ payload: [UInt8], checksum: UInt64) -> Position? {
        let total = Self.recordHeaderBytes + Self.aligned(payload.count)
        guard payload.count > 0, payload.count <= Int(UInt32.max), total <= self.capacity else { return nil }
        return self.lock.withLock {
            var half = self.active
            if total > self.capacity - self.ends[half] {
                // Full: the other half, if it is empty.
                guard self.rotateLocked() else { return nil }
                half = self.active
            }
            let epoch = self.load(UInt64.self, Offset.epoch(half))
            let record = self.data(half) + self.ends[half]
            payload.withUnsafeBytes { bytes in
                (record + Self.recordHeaderBytes).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            }
            record.storeBytes(of: epoch, toByteOffset: 8, as: UInt64.self)
            record.storeBytes(of: checksum, toByteOffset: 16, as: UInt64.self)
            atomicMemoryFence(ordering: .releasing)
            record.storeBytes(of: UInt32(payload.count), toByteOffset: 0, as: UInt32.self)
            self.ends[half] += total
            return Position(epoch: epoch, end: self.ends[half])
        }
    }

    /// Records go to the other half from now on, if it is empty (all its records applied);
    /// false when it is not, or when the active half holds nothing yet.
    @discardableResult
    package func rotate() -> Bool {
        self.lock.withLock { self.ends[self.active] > 0 && self.rotateLocked() }
    }

    /// Everything up to `position` is applied to SQLite: a half that is not active and
    /// holds nothing after it is emptied.
    package func applied(through position: Position) {
        self.lock.withLock {
            if self.appliedThrough.map({ $0 < position }) ?? true { self.appliedThrough = position }
            self.releaseInactiveIfApplied()
        }
    }

    /// The valid records after `position` (nil: all), oldest first, with their positions.
    package func records(after position: Position?) -> [(position: Position, payload: [UInt8])] {
        self.lock.withLock {
            let halves = (0..<2).filter { self.load(UInt64.self, Offset.epoch($0)) != 0 }
                .sorted { self.load(UInt64.self, Offset.epoch($0)) < self.load(UInt64.self, Offset.epoch($1)) }
            return halves.flatMap { self.scan($0).records }.filter { position == nil || $0.position > position! }
        }
    }

    /// Starts over after the records read back are applied: both halves empty, the next
    /// epoch active.
    package func reset() {
        self.lock.withLock {
            let next = max(self.load(UInt64.self, Offset.epoch(0)), self.load(UInt64.self, Offset.epoch(1))) &+ 1
            let inactive = 1 - self.active
            // The active half's records become invalid (new epoch) before the other's.
            self.store(next, Offset.epoch(self.active))
            self.store(UInt64(0), Offset.epoch(inactive))
            self.ends = [0, 0]
            self.appliedThrough = nil
        }
    }

    /// Bytes in use by records in both halves (for tests and metrics).
    package var usedBytes: Int { self.lock.withLock { self.ends[0] + self.ends[1] } }

    private var active: Int { Int(self.load(UInt64.self, Offset.active) & 1) }

    /// Empties the half that is not active when SQLite has everything it holds.
    private func releaseInactiveIfApplied() {
        let inactive = 1 - self.active
        let epoch = self.load(UInt64.self, Offset.epoch(inactive))
        guard epoch != 0, let applied = self.appliedThrough, Position(epoch: epoch, end: self.ends[inactive]) <= applied else { return }
        self.store(UInt64(0), Offset.epoch(inactive))
        self.ends[inactive] = 0
    }

    private func rotateLocked() -> Bool {
        self.releaseInactiveIfApplied()
        let inactive = 1 - self.active
        guard self.load(UInt64.self, Offset.epoch(inactive)) == 0 else { return false }
        let next = self.load(UInt64.self, Offset.epoch(self.active)) &+ 1
        self.ends[inactive] = 0
        self.store(next, Offset.epoch(inactive))
        atomicMemoryFence(ordering: .releasing)
        self.store(UInt64(inactive), Offset.active)
        return true
    }

    private func data(_ half: Int) -> UnsafeMutableRawPointer {
        self.base + Self.headerBytes + half * self.capacity
    }

    /// The valid records of `half`, and where they end.
    private func scan(_ half: Int) -> (records: [(position: Position, payload: [UInt8])], end: Int) {
        let epoch = self.load(UInt64.self, Offset.epoch(half))
        guard epoch != 0 else { return ([], 0) }
        var records: [(position: Position, payload: [UInt8])] = []
        var offset = 0
        while self.capacity - offset >= Self.recordHeaderBytes {
            let record = UnsafeRawPointer(self.data(half) + offset)
            let length = Int(record.load(as: UInt32.self))
            let total = Self.recordHeaderBytes + Self.aligned(length)
            guard length > 0, total <= self.capacity - offset, record.load(fromByteOffset: 8, as: UInt64.self) == epoch else { break }
            let payload = [UInt8](UnsafeRawBufferPointer(start: record + Self.recordHeaderBytes, count: length))
            guard Self.checksum(payload) == record.load(fromByteOffset: 16, as: UInt64.self) else { break }
            offset += total
            records.append((Position(epoch: epoch, end: offset), payload))
        }
        return (records, offset)
    }

    /// FNV-1a, 64 bits: catches a torn or stale record, not an adversary. Computed by the
    /// caller before ``append(_:checksum:)``, outside the locks.
    package static func checksum(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func aligned(_ count: Int) -> Int { (count + 7) & ~7 }

    private func load<T>(_: T.Type, _ offset: Int) -> T {
        self.base.load(fromByteOffset: offset, as: T.self)
    }

    private func store<T>(_ value: T, _ offset: Int) {
        self.base.storeBytes(of: value, toByteOffset: offset, as: T.self)
    }
}

/// The intake log (``IntakeLogFile``) could not be opened or mapped.
package struct IntakeLogError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Operation: String, Hashable, Sendable {
        case open
        case resize
        case reserve = "reserve space for"
        case map
    }

    package var path: String
    package var operation: Operation
    package var errno: Int32

    package var description: String {
        "cannot \(self.operation.rawValue) the intake log \(self.path): \(String(cString: strerror(self.errno)))"
    }

    package init(path: String, operation: Operation, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }
}
