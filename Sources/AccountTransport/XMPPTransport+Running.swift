import XMPP

/// How an account's task runs its session (docs/design.md): prepared (side work, OMEMO
/// device, presence extensions), then run with its events taken while some wait. Each step
/// is a function of its own: the task keeps the deepest stack of async frames it ever ran
/// for the account's life (docs/performance.md), so what a step reads stays out of the
/// frames it keeps while the session runs.
extension XMPPTransport {
    /// Whether the session may run, with its side work.
    enum Preparation {
        case ready(SideWork?)
        case failed
    }

    /// Side work, the OMEMO device and the presence extensions, before the session runs.
    @inline(never)
    func prepare() async -> Preparation {
        // Child tasks beside the event path (``SideWork``): only with a profile or OMEMO.
        let side = self.omemoSettings != nil || !self.profile.isEmpty ? SideWork() : nil
        self.side.withLockedValue { $0 = side }
        // The device before the session: its first message may be encrypted.
        if let settings = self.omemoSettings, let side, !(await self.openOMEMO(settings, side: side)) { return .failed }
        // Every presence carries the avatar's hash (XEP-0153); no call without.
        if let update = self.profile.presenceUpdate { await self.session.setPresenceExtensions([update]) }
        return .ready(side)
    }

    /// Runs the session in this task and takes its events while some wait; returns once it
    /// ended and its last events are taken.
    func runAndDrain(_ session: XMPPSession<EventLoopClock>) async {
        let drain = self.eventDrain
        drain.start { [weak self] in await self?.takeBuffered() }
        session.events.whenAdded { drain.wake() }
        await session.run()
        await drain.idle()
    }
}
