import Foundation
import TransportCore

/// Routes changed at run time (issue 3, `xmpp-bridge route`), applied over the configured channels.
///
/// One concern of the state (``StateStore``); every method is one blocking transaction.
package protocol RouteStore: AnyObject, Sendable {
    /// Every stored route change, oldest first (at most one per channel and endpoint).
    func routes() throws(StateStoreError) -> [RouteChange]
    /// Records that `member` joins `channel` (replacing an earlier change for its endpoint).
    func addRoute(channel: String, member: ChannelMember) throws(StateStoreError)
    /// Records that `endpoint` leaves `channel` (replacing an earlier change for it).
    func removeRoute(channel: String, endpoint: Endpoint) throws(StateStoreError)
}

extension RouteStore {
    /// The routing table in effect: the stored changes applied over `channels` (see
    /// `RouteChange.apply(_:to:)`).
    package func applyRoutes(to channels: [RelayChannel]) throws(StateStoreError) -> [RelayChannel] {
        RouteChange.apply(try self.routes(), to: channels)
    }
}
