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
/// `synchronous = NORMAL`: both give the same promise (see the README, "Nothing lost").
///
/// Layout (native byte order, fixed size): a 64-byte header (magic, capacity, generation,
/// applied end), then records from offset 64, each 8-byte aligned: payload length (u32),
/// reserved (u32), generation (u64), FNV-1a checksum of the payload (u64), payload. A
/// record is valid only with the header's generation and a matching checksum: reading
/// stops at the first that is not, so a reset (generation + 1) invalidates all at once.
///
/// This file owns the mapping; no pointer leaves it. Each call takes the file's lock.
final class IntakeLogFile: @unchecked Sendable {
    static let defaultCapacity = 4 << 20
    static let headerBytes = 64
    static let recordHeaderBytes = 24
    private static let magic: UInt64 = 0x3130_4B41_544E_4958  // "XINTAK01"

    private enum Offset {
        static let magic = 0, capacity = 8, generation = 16, applied = 24
    }

    let path: String
    let capacity: Int
    private let base: UnsafeMutableRawPointer
    private let size: Int
    private let lock = NIOLock()
    /// Where the next record goes (the end of the valid records).
    private var end: Int

    /// Opens (creating it if needed) the log at `path`; a file of another capacity or
    /// without the magic starts empty.
    init(path: String, capacity: Int = IntakeLogFile.defaultCapacity) throws(IntakeLogError) {
        precondition(capacity >= 4096, "an intake log needs room for records")
        self.path = path
        self.capacity = capacity
        self.size = Self.headerBytes + capacity
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw IntakeLogError(path: path, operation: "open", errno: errno) }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(self.size)) == 0 else { throw IntakeLogError(path: path, operation: "resize", errno: errno) }
        // Blocks reserved now: a store into a page the full disk cannot back would be SIGBUS.
        let reserved = posix_fallocate(descriptor, 0, off_t(self.size))
        guard reserved == 0 else { throw IntakeLogError(path: path, operation: "reserve space for", errno: reserved) }
        guard let mapped = mmap(nil, self.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            throw IntakeLogError(path: path, operation: "map", errno: errno)
        }
        self.base = mapped
        self.end = Self.headerBytes
        if self.load(UInt64.self, Offset.magic) != Self.magic || self.load(UInt64.self, Offset.capacity) != UInt64(capacity) {
            memset(self.base, 0, Self.headerBytes)
            self.store(UInt64(capacity), Offset.capacity)
            // Not 1: records left by an earlier file of another layout must never match.
            self.store(UInt64.random(in: 1...(UInt64.max >> 1)), Offset.generation)
            self.store(UInt64(Self.headerBytes), Offset.applied)
            atomicMemoryFence(ordering: .releasing)
            self.store(Self.magic, Offset.magic)
        }
        self.end = self.scan(from: Self.headerBytes).end
    }

    deinit {
        munmap(self.base, self.size)
    }

    /// Copies `payload` in as one record; returns the log's end after it, or nil when it
    /// does not fit (the caller then waits for SQLite instead).
    func append(_ payload: [UInt8]) -> Int? {
        self.lock.withLock {
            let total = Self.recordHeaderBytes + Self.aligned(payload.count)
            guard payload.count <= Int(UInt32.max), total <= self.size - self.end else { return nil }
            let record = self.base + self.end
            payload.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress { (record + Self.recordHeaderBytes).copyMemory(from: source, byteCount: bytes.count) }
            }
            record.storeBytes(of: self.load(UInt64.self, Offset.generation), toByteOffset: 8, as: UInt64.self)
            record.storeBytes(of: Self.checksum(payload), toByteOffset: 16, as: UInt64.self)
            atomicMemoryFence(ordering: .releasing)
            record.storeBytes(of: UInt32(payload.count), toByteOffset: 0, as: UInt32.self)
            self.end += total
            return self.end
        }
    }

    /// Everything before `end` (a value ``append(_:)`` returned) is applied to SQLite.
    func applied(through end: Int) {
        self.lock.withLock {
            guard end > Int(self.load(UInt64.self, Offset.applied)) else { return }
            self.store(UInt64(end), Offset.applied)
        }
    }

    /// Starts over when every record is applied: the next generation, no records. Returns
    /// false (and changes nothing) when some record is not applied yet.
    @discardableResult
    func resetIfApplied() -> Bool {
        self.lock.withLock {
            guard Int(self.load(UInt64.self, Offset.applied)) >= self.end else { return false }
            self.resetLocked()
            return true
        }
    }

    /// Starts over unconditionally (after the records read back are applied at start-up).
    func reset() {
        self.lock.withLock { self.resetLocked() }
    }

    /// The payloads of the valid records not yet applied, in order.
    func unapplied() -> [[UInt8]] {
        self.lock.withLock {
            let applied = Int(self.load(UInt64.self, Offset.applied))
            return self.scan(from: Self.headerBytes).records.filter { $0.end > applied }.map(\.payload)
        }
    }

    /// Bytes in use by records (for tests and metrics).
    var usedBytes: Int { self.lock.withLock { self.end - Self.headerBytes } }

    private func resetLocked() {
        self.store(UInt64(Self.headerBytes), Offset.applied)
        atomicMemoryFence(ordering: .releasing)
        self.store(self.load(UInt64.self, Offset.generation) &+ 1, Offset.generation)
        self.end = Self.headerBytes
    }

    /// The valid records from `start`, and where they end.
    private func scan(from start: Int) -> (records: [(end: Int, payload: [UInt8])], end: Int) {
        let generation = self.load(UInt64.self, Offset.generation)
        var records: [(end: Int, payload: [UInt8])] = []
        var offset = start
        while self.size - offset >= Self.recordHeaderBytes {
            let record = UnsafeRawPointer(self.base + offset)
            let length = Int(record.load(as: UInt32.self))
            let total = Self.recordHeaderBytes + Self.aligned(length)
            guard length > 0, total <= self.size - offset, record.load(fromByteOffset: 8, as: UInt64.self) == generation else { break }
            let payload = [UInt8](UnsafeRawBufferPointer(start: record + Self.recordHeaderBytes, count: length))
            guard Self.checksum(payload) == record.load(fromByteOffset: 16, as: UInt64.self) else { break }
            records.append((offset + total, payload))
            offset += total
        }
        return (records, offset)
    }

    /// FNV-1a, 64 bits: catches a torn or stale record, not an adversary.
    static func checksum(_ bytes: [UInt8]) -> UInt64 {
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
struct IntakeLogError: Error, Hashable, Sendable, CustomStringConvertible {
    var path: String
    /// What failed: open, resize, reserve space for, map.
    var operation: String
    var errno: Int32

    var description: String {
        "cannot \(self.operation) the intake log \(self.path): \(String(cString: strerror(self.errno)))"
    }
}
