import TestSupport
import Testing
import TransportCore

@testable import Bridge
@testable import BridgeFeatures

/// The pure presence relay of issue 5 (deliverables 1 and 2): aggregation order and status
/// text, which account a contact feeds, coalescing on a manual clock, own-presence mirrors,
/// local events and reloads — all without sockets.
@Suite("PresenceRelay")
struct PresenceRelayTests {
    typealias Relay = PresenceRelay<ManualClock>
    typealias Action = Relay.Action
    typealias Availability = PresenceState.Availability

    static let alice = Endpoint(transport: "work", address: "alice@work.example")
    static let bob = Endpoint(transport: "home", address: "bob@home.example")
    static let carol = Endpoint(transport: "play", address: "carol@play.example")
    static let accounts: Set<String> = ["work", "home", "play"]

    static func member(_ endpoint: Endpoint, _ direction: ChannelMember.Direction = .inout) -> ChannelMember {
        ChannelMember(endpoint: endpoint, direction: direction)
    }

    static func local(_ transport: String, _ direction: ChannelMember.Direction) -> ChannelMember {
        ChannelMember(endpoint: Endpoint(transport: transport), direction: direction)
    }

    static func state(_ availability: Availability, _ status: String? = nil) -> PresenceState {
        PresenceState(availability: availability, status: status)
    }

    static func at(_ seconds: Int) -> ManualClock.Instant {
        ManualClock.Instant(offset: .seconds(seconds))
    }

    /// A relay over `channels`, all with presence on unless `presenceChannels` says otherwise.
    static func relay(
        _ channels: [RelayChannel], presenceChannels: Set<String>? = nil, mirrors: [(from: String, to: String)] = [],
        interval: Duration = .seconds(10), ownJIDs: Set<String> = []
    ) -> Relay {
        Relay(
            channels: channels, presenceChannels: presenceChannels ?? Set(channels.map(\.name)), accounts: Self.accounts,
            mirrors: mirrors, interval: interval, ownJIDs: ownJIDs
        )
    }

    /// The 1:1 link `[work:alice, home:bob]`.
    static let link = RelayChannel(name: "link", members: [member(alice), member(bob)])

    // MARK: - Aggregation

    @Test("the most available wins for every pair; status as is for one, listed for several", arguments: Availability.allCases, Availability.allCases)
    func aggregationOfEveryPair(_ first: Availability, _ second: Availability) {
        let group = RelayChannel(name: "group", members: [Self.member(Self.alice), Self.member(Self.carol), Self.member(Self.bob)])
        var relay = Self.relay([group], interval: .zero)
        _ = relay.contactChanged(Self.alice, nick: "alice", state: Self.state(first), now: Self.at(0))
        _ = relay.contactChanged(Self.carol, nick: "carol", state: Self.state(second), now: Self.at(0))

        let expected: PresenceState
        switch (first, second) {
        case (.unavailable, .unavailable): expected = .unavailable
        case (_, .unavailable): expected = Self.state(first)
        case (.unavailable, _): expected = Self.state(second)
        default: expected = Self.state(max(first, second), "alice: \(first); carol: \(second)")
        }
        #expect(relay.desired(for: "home") == expected)
        #expect(Relay.aggregate([.init(nick: "carol", state: Self.state(second)), .init(nick: "alice", state: Self.state(first))]) == expected)
    }

    @Test("availability order is chat > available > away > xa > dnd > unavailable")
    func availabilityOrder() {
        let order: [Availability] = [.chat, .available, .away, .xa, .dnd, .unavailable]
        for (index, higher) in order.enumerated() {
            for lower in order[(index + 1)...] {
                let winner = Relay.aggregate([.init(nick: "a", state: Self.state(lower)), .init(nick: "b", state: Self.state(higher))])
                #expect(winner.availability == higher)
            }
        }
    }

    @Test("one present source lends its status as is, nil staying nil")
    func singleSourceStatus() {
        #expect(Relay.aggregate([.init(nick: "alice", state: Self.state(.away))]) == Self.state(.away))
        #expect(Relay.aggregate([.init(nick: "alice", state: Self.state(.dnd, "in a meeting")), .init(nick: "bob", state: .unavailable)]) == Self.state(.dnd, "in a meeting"))
        #expect(Relay.aggregate([]) == .unavailable)
    }

    @Test("several present sources are listed in nick order; absent ones are left out")
    func severalSourcesStatus() {
        let contacts: [Relay.Contact] = [
            .init(nick: "bob", state: Self.state(.away)),
            .init(nick: "carol", state: .unavailable),
            .init(nick: "alice", state: Self.state(.dnd, "in a meeting")),
        ]
        #expect(Relay.aggregate(contacts) == Self.state(.away, "alice: in a meeting; bob: away"))
        let mixedCase: [Relay.Contact] = [.init(nick: "Zed", state: Self.state(.chat)), .init(nick: "adam", state: Self.state(.xa, "zzz"))]
        #expect(Relay.aggregate(mixedCase) == Self.state(.chat, "adam: zzz; Zed: chat"))
    }

    // MARK: - Who feeds whom

    @Test("a 1:1 link feeds each side's account with the other side's contact")
    func oneToOneLinkBothWays() {
        var relay = Self.relay([Self.link])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.away, "lunch"), now: Self.at(0)) == [.publish(account: "home", Self.state(.away, "lunch"))])
        #expect(relay.contactChanged(Self.bob, nick: "bob", state: Self.state(.chat), now: Self.at(0)) == [.publish(account: "work", Self.state(.chat))])
    }

    @Test("a change of avatar alone publishes nothing, and no avatar is ever published for someone else (XEP-0153 hashes stay with their owner)")
    func avatarAloneIsNoChange() {
        var relay = Self.relay([Self.link], interval: .zero)
        var withAvatar = Self.state(.away, "lunch")
        withAvatar.avatar = "a3f1c0ffee00112233445566778899aabbccddee"
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: withAvatar, now: Self.at(0)) == [.publish(account: "home", Self.state(.away, "lunch"))])
        withAvatar.avatar = ""
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: withAvatar, now: Self.at(20)).isEmpty)
    }

    @Test("addresses compare lower-cased")
    func addressesCompareLowerCased() {
        var relay = Self.relay([Self.link])
        let shouting = Endpoint(transport: "work", address: "Alice@WORK.example")
        #expect(relay.contactChanged(shouting, nick: "alice", state: Self.state(.xa), now: Self.at(0)) == [.publish(account: "home", Self.state(.xa))])
        #expect(relay.presence(of: Self.alice) == Self.state(.xa))
    }

    @Test("a contact in a channel with two other accounts feeds both")
    func feedsEveryOtherAccount() {
        let group = RelayChannel(name: "group", members: [Self.member(Self.alice), Self.member(Self.bob), Self.member(Self.carol)])
        var relay = Self.relay([group])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.available), now: Self.at(0)) == [
            .publish(account: "home", Self.state(.available)), .publish(account: "play", Self.state(.available)),
        ])
    }

    @Test("a channel with presence off feeds nothing and tells no local transport")
    func presenceOffFeedsNothing() {
        let channel = RelayChannel(name: "quiet", members: [Self.member(Self.alice), Self.member(Self.bob), Self.local("stdout", .out)])
        var relay = Self.relay([channel], presenceChannels: [])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.available), now: Self.at(0)) == [])
        #expect(relay.accountOnline(account: "home", now: Self.at(1)) == [])
    }

    @Test("directions and transports: only senders feed, only receivers are fed, never the contact's own account")
    func directionsAndOwnTransport() {
        let sameAccount = Endpoint(transport: "work", address: "dave@work.example")
        let channels = [
            RelayChannel(name: "listen", members: [Self.member(Self.alice, .out), Self.member(Self.bob)]),
            RelayChannel(name: "shout", members: [Self.member(Self.carol), Self.member(Self.bob, .in)]),
            RelayChannel(name: "inside", members: [Self.member(Self.alice), Self.member(sameAccount)]),
        ]
        var relay = Self.relay(channels)
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.available), now: Self.at(0)) == [])
        #expect(relay.contactChanged(Self.carol, nick: "carol", state: Self.state(.available), now: Self.at(0)) == [])
        // bob feeds `work` through "listen" (alice receives there) and `play` through "shout".
        #expect(relay.contactChanged(Self.bob, nick: "bob", state: Self.state(.available), now: Self.at(0)) == [
            .publish(account: "play", Self.state(.available)), .publish(account: "work", Self.state(.available)),
        ])
        let stranger = Endpoint(transport: "work", address: "eve@work.example")
        #expect(relay.contactChanged(stranger, nick: "eve", state: Self.state(.available), now: Self.at(0)) == [])
    }

    @Test("the bridge's own accounts are never relayed as contacts")
    func ownAccountsAreNotContacts() {
        let homeSeenFromWork = Endpoint(transport: "work", address: "relay@home.example")
        let channel = RelayChannel(name: "loop", members: [Self.member(homeSeenFromWork), Self.member(Self.bob)])
        var relay = Self.relay([channel], ownJIDs: ["Relay@home.example"])
        #expect(relay.contactChanged(homeSeenFromWork, nick: "home", state: Self.state(.away), now: Self.at(0)) == [])
        #expect(relay.contactChanged(Self.bob, nick: "bob", state: Self.state(.away), now: Self.at(0)) == [.publish(account: "work", Self.state(.away))])
    }

    // MARK: - Coalescing

    @Test("a contact flapping 20 times within one interval: one publish now, one scheduled with the final state")
    func flappingIsCoalesced() {
        let clock = ManualClock()
        var relay = Self.relay([Self.link], interval: .seconds(10))
        var actions: [Action] = []
        var last = PresenceState.unavailable
        for take in 0..<20 {
            last = Self.state(take.isMultiple(of: 2) ? .away : .available, "take \(take)")
            actions += relay.contactChanged(Self.alice, nick: "alice", state: last, now: clock.now)
            clock.advance(by: .milliseconds(450))
        }
        #expect(actions == [.publish(account: "home", Self.state(.away, "take 0")), .schedule(account: "home", at: Self.at(10))])

        clock.advance(to: Self.at(10))
        #expect(relay.timerFired(account: "home", now: clock.now) == [.publish(account: "home", last)])
        #expect(relay.timerFired(account: "home", now: clock.now) == [])  // nothing pending any more

        // The next change within the interval after that publish waits for it again.
        clock.advance(by: .seconds(2))
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.xa), now: clock.now) == [.schedule(account: "home", at: Self.at(20))])
    }

    @Test("a change back to the last published state cancels the publish at the timer")
    func changeBackCancels() {
        let clock = ManualClock()
        var relay = Self.relay([Self.link], interval: .seconds(10))
        let meeting = Self.state(.dnd, "in a meeting")
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: meeting, now: clock.now) == [.publish(account: "home", meeting)])
        clock.advance(by: .seconds(1))
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.available), now: clock.now) == [.schedule(account: "home", at: Self.at(10))])
        clock.advance(by: .seconds(1))
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: meeting, now: clock.now) == [])
        clock.advance(to: Self.at(10))
        #expect(relay.timerFired(account: "home", now: clock.now) == [])
        // The interval since the last publish has passed: the next change goes out at once.
        clock.advance(by: .seconds(1))
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.chat), now: clock.now) == [.publish(account: "home", Self.state(.chat))])
    }

    @Test("an unchanged state is never published; an early timer is re-armed; a stale one does nothing")
    func unchangedEarlyAndStale() {
        var relay = Self.relay([Self.link], interval: .seconds(10))
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.away), now: Self.at(0)) == [.publish(account: "home", Self.state(.away))])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.away), now: Self.at(30)) == [])
        #expect(relay.timerFired(account: "home", now: Self.at(31)) == [])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.xa), now: Self.at(35)) == [.publish(account: "home", Self.state(.xa))])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.away), now: Self.at(36)) == [.schedule(account: "home", at: Self.at(45))])
        #expect(relay.timerFired(account: "home", now: Self.at(40)) == [.schedule(account: "home", at: Self.at(45))])
        #expect(relay.timerFired(account: "home", now: Self.at(45)) == [.publish(account: "home", Self.state(.away))])
    }

    // MARK: - Connecting

    @Test("accountOnline publishes at once, even unchanged and within the interval")
    func accountOnlinePublishesImmediately() {
        var relay = Self.relay([Self.link], interval: .seconds(10))
        #expect(relay.accountOnline(account: "home", now: Self.at(0)) == [.publish(account: "home", .unavailable)])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.away), now: Self.at(1)) == [.schedule(account: "home", at: Self.at(10))])
        #expect(relay.accountOnline(account: "home", now: Self.at(2)) == [.publish(account: "home", Self.state(.away))])
        #expect(relay.accountOnline(account: "home", now: Self.at(3)) == [.publish(account: "home", Self.state(.away))])
        // The pending timer finds nothing new; a later change keeps a full interval after the reconnect's publish.
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.xa), now: Self.at(4)) == [])
        #expect(relay.timerFired(account: "home", now: Self.at(10)) == [.schedule(account: "home", at: Self.at(13))])
        #expect(relay.timerFired(account: "home", now: Self.at(13)) == [.publish(account: "home", Self.state(.xa))])
    }

    @Test("an account the relay does not drive keeps its session's own presence")
    func accountOnlineUnmanaged() {
        var relay = Self.relay([Self.link])
        #expect(relay.accountOnline(account: "play", now: Self.at(0)) == [])
    }

    @Test("accountOffline: what the account saw counts as unavailable")
    func accountOfflineForgetsContacts() {
        let channel = RelayChannel(name: "link", members: [Self.member(Self.alice), Self.member(Self.bob), Self.local("socket", .out)])
        var relay = Self.relay([channel], interval: .seconds(10))
        _ = relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.away), now: Self.at(0))
        #expect(relay.accountOffline(account: "work", now: Self.at(20)) == [
            .localEvent(channel: "link", transport: "socket", contact: Self.alice, nick: "alice", state: .unavailable),
            .publish(account: "home", .unavailable),
        ])
        #expect(relay.presence(of: Self.alice) == .unavailable)
        #expect(relay.accountOffline(account: "work", now: Self.at(40)) == [])
    }

    // MARK: - Mirrors

    @Test("own-presence mirror: the target follows the source, and contacts do not feed it")
    func mirrorFollowsSourceExclusively() {
        var relay = Self.relay([Self.link], mirrors: [(from: "work", to: "home"), (from: "play", to: "home"), (from: "play", to: "play")])
        let lunch = Self.state(.away, "lunch")
        #expect(relay.ownPresenceChanged(account: "work", state: lunch, now: Self.at(0)) == [.publish(account: "home", lunch)])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.chat), now: Self.at(20)) == [])
        #expect(relay.desired(for: "home") == lunch)
        #expect(relay.contactChanged(Self.bob, nick: "bob", state: Self.state(.xa), now: Self.at(20)) == [.publish(account: "work", Self.state(.xa))])
        // Only the first mirror onto `home` counts; a mirror onto itself is ignored.
        #expect(relay.ownPresenceChanged(account: "play", state: Self.state(.chat), now: Self.at(20)) == [])
        #expect(relay.accountOnline(account: "play", now: Self.at(20)) == [])
        // Mirrors are coalesced like contacts; the user's clients going away empties the target.
        #expect(relay.ownPresenceChanged(account: "work", state: Self.state(.available), now: Self.at(21)) == [.publish(account: "home", Self.state(.available))])
        #expect(relay.ownPresenceChanged(account: "work", state: .unavailable, now: Self.at(22)) == [.schedule(account: "home", at: Self.at(31))])
        #expect(relay.timerFired(account: "home", now: Self.at(31)) == [.publish(account: "home", .unavailable)])
    }

    // MARK: - Local transports

    @Test("local transports receiving in a presence channel get each actual change, uncoalesced")
    func localEventsOnlyOnChange() {
        let channel = RelayChannel(name: "link", members: [
            Self.member(Self.alice), Self.local("stdout", .out), Self.local("socket", .inout), Self.local("stdin", .in), Self.member(Self.bob),
            Self.local("stdout", .out),
        ])
        let quiet = RelayChannel(name: "quiet", members: [Self.member(Self.alice), Self.local("fifo", .out)])
        var relay = Self.relay([channel, quiet], presenceChannels: ["link"], interval: .seconds(10))
        let away = Self.state(.away, "brb")
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: away, now: Self.at(0)) == [
            .localEvent(channel: "link", transport: "stdout", contact: Self.alice, nick: "alice", state: away),
            .localEvent(channel: "link", transport: "socket", contact: Self.alice, nick: "alice", state: away),
            .publish(account: "home", away),
        ])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: away, now: Self.at(1)) == [])
        #expect(relay.contactChanged(Self.alice, nick: "Alice", state: away, now: Self.at(2)) == [])
        #expect(relay.contactChanged(Self.alice, nick: "Alice", state: .unavailable, now: Self.at(3)) == [
            .localEvent(channel: "link", transport: "stdout", contact: Self.alice, nick: "Alice", state: .unavailable),
            .localEvent(channel: "link", transport: "socket", contact: Self.alice, nick: "Alice", state: .unavailable),
            .schedule(account: "home", at: Self.at(10)),
        ])
        // Unknown counts as unavailable, so a first "gone" is no change.
        let stranger = Endpoint(transport: "work", address: "dave@work.example")
        #expect(relay.contactChanged(stranger, nick: "dave", state: .unavailable, now: Self.at(4)) == [])
    }

    // MARK: - Reload

    @Test("update() recomputes who feeds whom and keeps known contact states")
    func updateOnReload() {
        var relay = Self.relay([Self.link], presenceChannels: [], interval: .seconds(10))
        let meeting = Self.state(.dnd, "in a meeting")
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: meeting, now: Self.at(0)) == [])

        // Presence turned on: the known state goes out; `work`, fed by bob not heard of, shows unavailable.
        #expect(relay.update(channels: [Self.link], presenceChannels: ["link"], accounts: Self.accounts, mirrors: [], now: Self.at(1)) == [
            .publish(account: "home", meeting), .publish(account: "work", .unavailable),
        ])
        // Unchanged configuration: nothing to do.
        #expect(relay.update(channels: [Self.link], presenceChannels: ["link"], accounts: Self.accounts, mirrors: [], now: Self.at(2)) == [])
        // A third account joins: it is fed at once; `home` still publishes nothing new.
        let group = RelayChannel(name: "link", members: [Self.member(Self.alice), Self.member(Self.bob), Self.member(Self.carol)])
        #expect(relay.update(channels: [group], presenceChannels: ["link"], accounts: Self.accounts, mirrors: [], now: Self.at(3)) == [
            .publish(account: "play", meeting),
        ])
        // The channel goes: every account is released to plain available, within the interval.
        #expect(relay.update(channels: [], presenceChannels: [], accounts: Self.accounts, mirrors: [], now: Self.at(4)) == [
            .schedule(account: "home", at: Self.at(11)), .schedule(account: "play", at: Self.at(13)),
            .schedule(account: "work", at: Self.at(11)),
        ])
        #expect(relay.timerFired(account: "home", now: Self.at(11)) == [.publish(account: "home", Relay.releasedPresence)])
        #expect(relay.timerFired(account: "work", now: Self.at(11)) == [.publish(account: "work", Relay.releasedPresence)])
        #expect(relay.timerFired(account: "play", now: Self.at(13)) == [.publish(account: "play", Relay.releasedPresence)])
        // Released and reconnected: the session's own presence stands, nothing more to say.
        #expect(relay.accountOnline(account: "home", now: Self.at(14)) == [])
        #expect(relay.desired(for: "home") == nil)
        #expect(relay.presence(of: Self.alice) == meeting)

        // The `work` account is removed: its contacts are forgotten, and the link feeds nobody.
        #expect(relay.update(channels: [Self.link], presenceChannels: ["link"], accounts: ["home", "play"], mirrors: [], now: Self.at(30)) == [])
        #expect(relay.presence(of: Self.alice) == .unavailable)
        #expect(relay.states["work"] == nil)
    }

    @Test("update() can switch an account from its contacts to a mirror")
    func updateToMirror() {
        var relay = Self.relay([Self.link], interval: .seconds(10))
        _ = relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.away), now: Self.at(0))
        _ = relay.ownPresenceChanged(account: "play", state: Self.state(.chat, "gaming"), now: Self.at(0))
        #expect(relay.update(channels: [Self.link], presenceChannels: ["link"], accounts: Self.accounts, mirrors: [(from: "play", to: "home")], now: Self.at(20)) == [
            .publish(account: "home", Self.state(.chat, "gaming")), .publish(account: "work", .unavailable),
        ])
        #expect(relay.contactChanged(Self.alice, nick: "alice", state: Self.state(.xa), now: Self.at(40)) == [])
    }
}
