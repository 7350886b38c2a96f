import Foundation
import Logging
import NIOCore
import OMEMO
import OMEMOState
import XMPP

/// An account as an OMEMO device (XEP-0384 v0.3; issue 41): its device and trust, the
/// device lists it follows, and what it publishes. It encrypts what the account sends to
/// a contact with a trusted device and decrypts what arrives encrypted; every change to
/// its keys is committed (``OMEMOStateKeeper``) before the message it concerns is written
/// or relayed. The I/O is the account session's; this actor decides and keeps.
actor AccountOMEMO {
    struct Configuration: Sendable {
        var trust: OMEMOTrust.Policy = .blind
        /// How often the signed prekey is replaced.
        var signedPreKeyRotation: Duration = .seconds(7 * 86400)
        /// Peer input bounds: a device list, a bundle, an `<encrypted/>`.
        var deviceLimit = 64
        var preKeyLimit = 200
        var limits = OMEMOEncrypted.Limits()
        /// How long a device whose bundle could not be had is passed over.
        var bundleRetry: Duration = .seconds(600)
        /// At most one repair (a new key exchange) per device in this time.
        var repairInterval: Duration = .seconds(3600)
        /// A key transport answers this many messages read from a device without a message
        /// of ours to it (clients do the same, about every 50), so its chain stays short.
        var heartbeatAfter = 50
        var requestTimeout: Duration = .seconds(30)
    }

    /// The account's event loop: the session, the delivery worker and this actor all run
    /// there, so a message's way through the device is no hop between threads.
    nonisolated let loop: any EventLoop
    /// The loop's executor, made once and kept (an unowned reference must outlive its use).
    nonisolated let executor: any SerialExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { self.executor.asUnownedSerialExecutor() }
    let jid: String
    let device: OMEMODevice
    var trust: OMEMOTrust
    var deviceLists: [String: OMEMODeviceList]
    let configuration: Configuration
    let keeper: OMEMOStateKeeper
    let now: @Sendable () -> Date
    let logger: Logger
    /// Where what follows beside the event path runs (a bundle publish, a repair).
    let side: SideWork
    /// Devices whose bundle could not be had, and until when they are passed over.
    var unreachable: [OMEMOAddress: Date] = [:]
    /// When each device was last repaired.
    var repaired: [OMEMOAddress: Date] = [:]
    /// Messages read from each device since we last sent to it.
    var unanswered: [OMEMOAddress: Int] = [:]
    /// Whether this process published the bundle as it is now.
    var bundlePublished = false
    /// Trust and device list changes for the next commit.
    var pending: [OMEMOStateChange] = []
    /// Messages read since the last flush.
    var readSinceFlush = 0
    /// At most this many device lists followed, and devices in each per-device table.
    static let trackedDevices = 10_000

    private init(
        jid: String, device: OMEMODevice, state: OMEMOAccountState, configuration: Configuration, keeper: OMEMOStateKeeper, loop: any EventLoop,
        side: SideWork, now: @escaping @Sendable () -> Date, logger: Logger
    ) {
        self.loop = loop
        self.executor = loop.executor
        self.jid = jid
        self.device = device
        self.trust = OMEMOTrust(policy: configuration.trust, levels: state.trust)
        self.deviceLists = state.deviceLists.mapValues { OMEMODeviceList($0) }
        self.configuration = configuration
        self.keeper = keeper
        self.side = side
        self.now = now
        self.logger = logger
    }

    /// The account's device as kept, or a new one (committed before it is used).
    static func open(
        jid: String, configuration: Configuration, keeper: OMEMOStateKeeper, loop: any EventLoop, side: SideWork,
        now: @escaping @Sendable () -> Date = Date.init, logger: Logger
    ) async throws -> AccountOMEMO {
        if let state = try await keeper.load() {
            let device = try OMEMODevice(jid: jid, keys: state.keys)
            logger.info("OMEMO device restored", metadata: ["device": "\(device.deviceID)"])
            return AccountOMEMO(jid: jid, device: device, state: state, configuration: configuration, keeper: keeper, loop: loop, side: side, now: now, logger: logger)
        }
        let device = try OMEMODevice.create(jid: jid, now: now())
        _ = device.takeChanges()
        try await keeper.commit([.created(device.keys)])
        let fingerprint = try device.fingerprint
        logger.notice("OMEMO device created", metadata: ["device": "\(device.deviceID)", "fingerprint": "\(fingerprint)"])
        return AccountOMEMO(
            jid: jid, device: device, state: OMEMOAccountState(keys: device.keys), configuration: configuration, keeper: keeper, loop: loop, side: side,
            now: now, logger: logger
        )
    }

    var deviceID: UInt32 { self.device.deviceID }

    /// ``opening(of:)`` in the caller's turn when it runs on the account's loop: no hop,
    /// which would put the message behind whatever the loop holds and split a burst into
    /// batches of one. Nil elsewhere (then ``open(_:via:)``).
    nonisolated func openingInTurn(of message: Message) -> (Opening, FollowUp)? {
        guard self.loop.inEventLoop else { return nil }
        return self.assumeIsolated { $0.opening(of: message) }
    }

    /// ``flushIfDue()`` in the caller's turn on the account's loop; false elsewhere.
    nonisolated func flushIfDueInTurn() -> Bool {
        guard self.loop.inEventLoop else { return false }
        self.assumeIsolated { $0.flushIfDue() }
        return true
    }

    /// Commits what the device and `more` changed; on failure the key changes are put back
    /// to go with the next commit, and the error is thrown (what they concern must not go on).
    func commit(_ more: [OMEMOStateChange] = []) async throws {
        let keys = self.device.takeChanges()
        var changes = more
        if !keys.isEmpty { changes.insert(.keys(keys), at: 0) }
        guard !changes.isEmpty else { return }
        do {
            try await self.keeper.commit(changes)
        } catch {
            // With the next commit: the keys as they are then, and these trust and device
            // list changes before any made since.
            self.device.putBack(keys)
            self.pending = more + self.pending
            self.logger.error("OMEMO state not committed", metadata: ["error": "\(error)"])
            throw error
        }
    }

    /// At the account's acknowledgement: what changed goes to the journal when a trust or
    /// device list change waits, or ``flushEvery`` messages were read since the last time.
    /// Receiving steps of a session need not be durable one by one: a state some steps
    /// behind still opens the sender's later messages (it derives the skipped keys), a
    /// message the server hands over again is opened again, and anything sent, or any new
    /// session, is committed on its own.
    func flushIfDue() {
        guard !self.pending.isEmpty || self.readSinceFlush >= Self.flushEvery else { return }
        self.flush()
    }

    /// Messages read between two flushes at most.
    static let flushEvery = 64

    /// Hands what changed over to be made durable without waiting, in order with what is
    /// handed over after it.
    func flush() {
        self.readSinceFlush = 0
        let keys = self.device.takeChanges()
        var changes = self.takePending()
        if !keys.isEmpty { changes.insert(.keys(keys), at: 0) }
        guard !changes.isEmpty else { return }
        self.keeper.record(changes)
    }

    /// `jid`'s devices as last seen (our own included for the account's JID).
    func devices(of jid: String) -> OMEMODeviceList? {
        self.deviceLists[jid]
    }

    /// A device list arrived (a notification or a fetch): kept; for our own JID, our device
    /// is put back when another client's update left it out. Returns the list to publish
    /// then, if any.
    func received(_ list: OMEMODeviceList, of jid: String) async -> OMEMODeviceList? {
        if self.deviceLists[jid] != list {
            // A bound on what strangers can make us keep: past it, a new account's list is
            // not followed.
            if self.deviceLists[jid] == nil, self.deviceLists.count >= Self.trackedDevices { return nil }
            self.deviceLists[jid] = list
            // With the next commit or acknowledgement: a list lost in a crash is read again.
            self.pending.append(.deviceList(jid: jid, devices: list.devices))
        }
        guard jid == self.jid, !list.contains(self.deviceID) else { return nil }
        return list.adding(self.deviceID)
    }
}
