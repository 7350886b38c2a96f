/// Rooms (XEP-0045) as the session's callers see them; the work is ``SessionRooms``'s.
extension XMPPSession {
    /// Sets the rooms to sit in: new ones are joined at once when online, removed ones left,
    /// changed ones (nick, password) and stopped ones (a reload tries them again) left and
    /// joined afresh. `cursors` are stored archive positions for rooms new to this session.
    /// The table changes before any stanza is written, so a call that overlaps another
    /// (a reload and a route change) cannot undo it.
    @_specialize(exported: true, where C == EventLoopClock)
    public func setRooms(_ rooms: [RoomConfiguration], cursors: [JID: ArchiveCursor] = [:]) async {
        await self.rooms.set(rooms, cursors: cursors, in: self)
    }

    /// Each room's state, by JID.
    public var roomStatuses: [RoomStatus] { self.rooms.statuses }

    /// Whether a delivery to `jid` can go now; when it can, `id` is remembered so its
    /// reflection is recognised as ours (never by nick).
    @_specialize(exported: true, where C == EventLoopClock)
    public func checkRoomSend(to jid: JID, id: String) -> RoomSendCheck {
        self.rooms.table.checkSend(to: jid, id: id)
    }
}
