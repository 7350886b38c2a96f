#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers
import Synchronization

/// One account's stream management positions (XEP-0198 §4, §5) in a memory-mapped file:
/// the stream position ledger (the XMPP library's `StreamPositionLedger`, by the conformance in
/// the application) the session writes right before each write to the socket.
///
/// Writes are stores to a shared file mapping: no system call, no commit, no thread hop.
/// The kernel keeps the pages when the process dies, so a bridge killed at any instant
/// (`kill -9`) finds on restart which stanza numbers carried which ids, how far the server
/// had acknowledged them and what we last reported handled. A host crash can lose pages
/// that were not yet written back: the file records the boot it was written in, and one
/// from another boot is not trusted (the session is then not resumed; see docs/nothing-lost.md).
///
/// Layout (native byte order, fixed size): a 128-byte header, then `capacity` slots of
/// 96 bytes, slot `n % capacity` for outbound stanza `n`:
/// - header: magic, capacity, boot id (16 bytes), the current session (tag, acknowledged,
///   sent, reported, overflowed, active, writing) and the previous one (tag, acknowledged,
///   active);
/// - slot: session tag, stanza number, id length (255: none or too long), id bytes.
///
/// This file owns the mapping; no pointer leaves it.
package final class StreamLedgerFile: @unchecked Sendable {
    /// Stanzas whose ids are kept per session: the unacknowledged window and recently
    /// acknowledged ones (whose completions may not be committed yet).
    package static let defaultCapacity = 1024
    package static let headerBytes = 128
    package static let slotBytes = 96
    package static let maximumIDBytes = slotBytes - 13
    private static let magic: UInt64 = 0x3130_4744_454C_4258  // "XBLEDG01"

    private enum Offset {
        static let magic = 0, capacity = 8, boot = 16
        static let tag = 32, acknowledged = 40, sent = 44, reported = 48, overflowed = 52, active = 56, writing = 60
        static let previousTag = 64, previousAcknowledged = 72, previousActive = 76
    }

    package let path: String
    package let capacity: Int
    private let base: UnsafeMutableRawPointer
    private let size: Int
    /// Held for each change: the session calls from its actor, so it is never contended.
    private let lock = NIOLock()

    /// Opens (creating it if needed) the file at `path`. Its content is kept when it was
    /// written in this boot with the same capacity; otherwise it starts empty.
    package init(path: String, bootID: BootID, capacity: Int = StreamLedgerFile.defaultCapacity) throws(StreamLedgerError) {
        precondition(capacity > 0, "a ledger needs at least one slot")
        self.path = path
        self.capacity = capacity
        self.size = Self.headerBytes + capacity * Self.slotBytes
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StreamLedgerError(path: path, operation: "open", errno: errno) }
        defer { close(descriptor) }
        // Decided from the header alone: a file that is not kept is emptied by truncation,
        // which touches no page (a memset would make all 96 KiB resident, per account).
        var header = [UInt8](repeating: 0, count: Offset.boot + 16)
        let read = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        let kept = read == header.count
            && header.withUnsafeBytes { bytes in
                bytes.loadUnaligned(fromByteOffset: Offset.magic, as: UInt64.self) == Self.magic
                    && bytes.loadUnaligned(fromByteOffset: Offset.capacity, as: UInt64.self) == UInt64(capacity)
                    && BootID(bytes.baseAddress! + Offset.boot) == bootID
            }
        if !kept, ftruncate(descriptor, 0) != 0 { throw StreamLedgerError(path: path, operation: "resize", errno: errno) }
        guard ftruncate(descriptor, off_t(self.size)) == 0 else { throw StreamLedgerError(path: path, operation: "resize", errno: errno) }
        guard let mapped = mmap(nil, self.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            throw StreamLedgerError(path: path, operation: "map", errno: errno)
        }
        self.base = mapped
        if !kept {
            self.store(UInt64(capacity), Offset.capacity)
            bootID.write(to: self.base + Offset.boot)
            atomicMemoryFence(ordering: .releasing)
            self.store(Self.magic, Offset.magic)
        }
    }

    deinit {
        munmap(self.base, self.size)
    }

    // MARK: StreamPositionLedger

    package func begin(sessionID: String, acknowledged: UInt32) {
        let tag = Self.tag(sessionID)
        self.lock.withLock {
            if self.load(UInt32.self, Offset.active) == 1, self.load(UInt64.self, Offset.tag) != tag {
                self.retireCurrent()
            }
            self.store(tag, Offset.tag)
            self.store(acknowledged, Offset.acknowledged)
            self.store(acknowledged, Offset.sent)
            self.store(acknowledged, Offset.writing)
            self.store(UInt32(0), Offset.overflowed)
            atomicMemoryFence(ordering: .releasing)
            self.store(UInt32(1), Offset.active)
        }
    }

    package func sent(_ number: UInt32, id: String?) {
        self.lock.withLock {
            guard self.load(UInt32.self, Offset.active) == 1 else { return }
            self.storeSlot(number, id: id)
            atomicMemoryFence(ordering: .releasing)
            self.store(number, Offset.sent)
        }
    }

    package func writing(_ number: UInt32, id: String?) {
        self.lock.withLock {
            guard self.load(UInt32.self, Offset.active) == 1 else { return }
            self.storeSlot(number, id: id)
            atomicMemoryFence(ordering: .releasing)
            self.store(number, Offset.writing)
        }
    }

    package func written(through number: UInt32) {
        self.lock.withLock {
            guard self.load(UInt32.self, Offset.active) == 1 else { return }
            self.store(number, Offset.sent)
        }
    }

    /// Writes stanza `number`'s slot in the current session (the lock held).
    private func storeSlot(_ number: UInt32, id: String?) {
        let tag = self.load(UInt64.self, Offset.tag)
        if number &- self.load(UInt32.self, Offset.acknowledged) > UInt32(self.capacity) {
            // The slot still holds an unacknowledged stanza's id: this session's window is
            // no longer known in full, so it is not resumed after a crash.
            self.store(UInt32(1), Offset.overflowed)
        }
        let slot = self.base + Self.headerBytes + Int(number % UInt32(self.capacity)) * Self.slotBytes
        slot.storeBytes(of: tag, toByteOffset: 0, as: UInt64.self)
        slot.storeBytes(of: number, toByteOffset: 8, as: UInt32.self)
        var length: UInt8 = 255
        if var id, id.utf8.count <= Self.maximumIDBytes {
            length = UInt8(id.utf8.count)
            id.withUTF8 { bytes in (slot + 13).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        }
        slot.storeBytes(of: length, toByteOffset: 12, as: UInt8.self)
    }

    package func acknowledged(through number: UInt32) {
        self.lock.withLock { self.store(number, Offset.acknowledged) }
    }

    package func reported(handled number: UInt32) {
        self.lock.withLock { self.store(number, Offset.reported) }
    }

    package func end() {
        self.lock.withLock {
            guard self.load(UInt32.self, Offset.active) == 1 else { return }
            self.retireCurrent()
            self.store(UInt32(0), Offset.active)
        }
    }

    /// The current session becomes the previous one: its acknowledged ids stay readable
    /// until its slots are reused.
    private func retireCurrent() {
        self.store(UInt32(0), Offset.previousActive)
        atomicMemoryFence(ordering: .releasing)
        self.store(self.load(UInt64.self, Offset.tag), Offset.previousTag)
        self.store(self.load(UInt32.self, Offset.acknowledged), Offset.previousAcknowledged)
        atomicMemoryFence(ordering: .releasing)
        self.store(UInt32(1), Offset.previousActive)
    }

    // MARK: Reading

    /// What the file says now (after a restart: what the earlier process left). Read at
    /// start; afterwards the mapping holds only the pages written since.
    package func snapshot() -> StreamLedgerSnapshot {
        self.lock.withLock {
            var snapshot = StreamLedgerSnapshot()
            // No session, current or previous: no slot means anything, and none is read (a
            // read would bring all 96 KiB into the page cache, and the kernel maps cached
            // neighbours of every later fault into this process).
            guard self.load(UInt32.self, Offset.active) == 1 || self.load(UInt32.self, Offset.previousActive) == 1 else { return snapshot }
            var slots: [(tag: UInt64, number: UInt32, id: String?)] = []
            slots.reserveCapacity(self.capacity)
            for index in 0..<self.capacity {
                let slot = UnsafeRawPointer(self.base + Self.headerBytes + index * Self.slotBytes)
                let length = Int(slot.load(fromByteOffset: 12, as: UInt8.self))
                let id = length <= Self.maximumIDBytes
                    ? String(decoding: UnsafeRawBufferPointer(start: slot + 13, count: length), as: UTF8.self) : nil
                slots.append((slot.load(fromByteOffset: 0, as: UInt64.self), slot.load(fromByteOffset: 8, as: UInt32.self), id))
            }
            var acknowledgedSessions: [(tag: UInt64, through: UInt32)] = []
            if self.load(UInt32.self, Offset.active) == 1 {
                let session = StreamLedgerSnapshot.Session(
                    tag: self.load(UInt64.self, Offset.tag), acknowledged: self.load(UInt32.self, Offset.acknowledged),
                    sent: self.load(UInt32.self, Offset.sent), reported: self.load(UInt32.self, Offset.reported),
                    overflowed: self.load(UInt32.self, Offset.overflowed) != 0
                )
                snapshot.current = session
                acknowledgedSessions.append((session.tag, session.acknowledged))
                // Unacknowledged stanzas, in order; an id not known for sure is "".
                var number = session.acknowledged
                while number != session.sent {
                    number &+= 1
                    let slot = slots[Int(number % UInt32(self.capacity))]
                    snapshot.unacknowledgedIDs.append(slot.tag == session.tag && slot.number == number ? slot.id ?? "" : "")
                }
                // Marked as being written but not recorded as written: in doubt.
                let writing = self.load(UInt32.self, Offset.writing)
                if writing &- session.sent < UInt32(self.capacity) {
                    while number != writing {
                        number &+= 1
                        let slot = slots[Int(number % UInt32(self.capacity))]
                        if slot.tag == session.tag, slot.number == number, let id = slot.id, !id.isEmpty { snapshot.inDoubtIDs.append(id) }
                    }
                }
            }
            if self.load(UInt32.self, Offset.previousActive) == 1 {
                acknowledgedSessions.append((self.load(UInt64.self, Offset.previousTag), self.load(UInt32.self, Offset.previousAcknowledged)))
            }
            for slot in slots {
                guard slot.tag != 0, let id = slot.id, !id.isEmpty else { continue }  // tag 0: never written
                // Acknowledged: at or before the session's acknowledged count (modulo 2³²).
                if acknowledgedSessions.contains(where: { $0.tag == slot.tag && $0.through &- slot.number < UInt32(1) << 31 }) {
                    snapshot.acknowledgedIDs.append(id)
                }
            }
            // Reading touched every slot: give the pages back (the file keeps them; a later
            // write faults its page in again), so an idle account costs one resident page.
            madvise(self.base, self.size, MADV_DONTNEED)
            return snapshot
        }
    }

    /// A session id's tag in the file (FNV-1a, 64 bits).
    package static func tag(_ sessionID: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sessionID.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private func load<T>(_: T.Type, _ offset: Int) -> T {
        self.base.load(fromByteOffset: offset, as: T.self)
    }

    private func store<T>(_ value: T, _ offset: Int) {
        self.base.storeBytes(of: value, toByteOffset: offset, as: T.self)
    }
}
