import Testing
import TestSupport

@testable import XMPP

/// Parses one `<presence/>` written inside a `jabber:client` stream.
private func presence(_ xml: String) throws -> Presence {
    let result = parseStream(testStreamHeader + xml)
    if let error = result.error { throw error }
    return try Presence(element: #require(result.events.compactMap(\.element).last))
}

private func available(_ from: String, priority: Int8 = 0, show: Presence.Show? = nil, status: String? = nil) throws -> Presence {
    var presence = Presence(show: show, status: status, priority: priority)
    presence.from = try JID(from)
    return presence
}

private func unavailable(_ from: String) throws -> Presence {
    var presence = Presence(type: .unavailable)
    presence.from = try JID(from)
    return presence
}

@Suite("Presence book")
struct PresenceBookTests {
    private let romeo = try! JID("romeo@example.net")

    @Test("the highest priority wins, whatever the show or order")
    func priority() throws {
        var book = PresenceBook()
        _ = book.update(try available("romeo@example.net/a", priority: 1, show: .chat))
        _ = book.update(try available("romeo@example.net/b", priority: 5, show: .dnd))
        _ = book.update(try available("romeo@example.net/c", priority: -3, show: .chat))
        #expect(book.best(for: self.romeo)?.from?.resourcepart == "b")
        #expect(book.resources(of: self.romeo).compactMap(\.from?.resourcepart) == ["b", "a", "c"])
    }

    @Test("equal priorities are broken by show: chat, available, away, xa, dnd")
    func showOrder() throws {
        var book = PresenceBook()
        let shows: [(String, Presence.Show?)] = [("dnd", .dnd), ("xa", .xa), ("away", .away), ("none", nil), ("chat", .chat)]
        for (resource, show) in shows {
            _ = book.update(try available("romeo@example.net/\(resource)", priority: 2, show: show))
        }
        #expect(book.resources(of: self.romeo).compactMap(\.from?.resourcepart) == ["chat", "none", "away", "xa", "dnd"])
        #expect(book.best(for: self.romeo)?.show == .chat)
    }

    @Test("equal priority and show go to the most recent update")
    func recency() throws {
        var book = PresenceBook()
        _ = book.update(try available("romeo@example.net/a", show: .away))
        _ = book.update(try available("romeo@example.net/b", show: .away))
        #expect(book.best(for: self.romeo)?.from?.resourcepart == "b")
        let change = book.update(try available("romeo@example.net/a", show: .away, status: "back soon"))
        #expect(change?.best?.from?.resourcepart == "a")
        #expect(change?.changed == true)
        #expect(book.resources(of: self.romeo).count == 2)
    }

    @Test("a change reports the aggregate and whether it moved")
    func changeFlag() throws {
        var book = PresenceBook()
        let first = try #require(book.update(try available("romeo@example.net/a", priority: 5)))
        #expect(first.bare == self.romeo)
        #expect(first.changed)
        #expect(first.best?.from == (try JID("romeo@example.net/a")))

        let lower = try #require(book.update(try available("romeo@example.net/b", priority: 1)))
        #expect(!lower.changed)
        #expect(lower.best == first.best)

        let gone = try #require(book.update(try unavailable("romeo@example.net/a")))
        #expect(gone.changed)
        #expect(gone.best?.from?.resourcepart == "b")

        let last = try #require(book.update(try unavailable("romeo@example.net/b")))
        #expect(last.changed)
        #expect(last.best == nil)
        #expect(book.resources(of: self.romeo).isEmpty)
        #expect(book.availableContacts.isEmpty)
    }

    @Test("unavailable from the bare JID clears every resource")
    func bareUnavailable() throws {
        var book = PresenceBook()
        _ = book.update(try available("romeo@example.net/a"))
        _ = book.update(try available("romeo@example.net/b"))
        _ = book.update(try available("nurse@example.com/c"))
        let change = try #require(book.update(try unavailable("romeo@example.net")))
        #expect(change == PresenceBook.Change(bare: self.romeo, best: nil, changed: true))
        #expect(book.resources(of: self.romeo).isEmpty)
        #expect(book.best(for: try JID("nurse@example.com")) != nil)
    }

    @Test("unavailable for an unknown resource changes nothing")
    func unknownUnavailable() throws {
        var book = PresenceBook()
        _ = book.update(try available("romeo@example.net/a"))
        let change = try #require(book.update(try unavailable("romeo@example.net/zzz")))
        #expect(!change.changed)
        #expect(change.best?.from?.resourcepart == "a")
    }

    @Test("presence from a bare JID is tracked as its own entry")
    func bareAvailable() throws {
        var book = PresenceBook()
        _ = book.update(try available("component.example.net"))
        #expect(book.best(for: try JID("component.example.net"))?.from == (try JID("component.example.net")))
    }

    @Test("best(for:) and resources(of:) accept a full JID")
    func fullJIDLookup() throws {
        var book = PresenceBook()
        _ = book.update(try available("romeo@example.net/a"))
        #expect(book.best(for: try JID("romeo@example.net/other")) != nil)
        #expect(book.resources(of: try JID("romeo@example.net/other")).count == 1)
    }

    @Test("subscription, probe and error presences and presences without from are ignored", arguments: [
        "<presence from='romeo@example.net/a' type='subscribe'/>",
        "<presence from='romeo@example.net/a' type='subscribed'/>",
        "<presence from='romeo@example.net/a' type='unsubscribe'/>",
        "<presence from='romeo@example.net/a' type='unsubscribed'/>",
        "<presence from='romeo@example.net/a' type='probe'/>",
        "<presence from='romeo@example.net/a' type='error'><error type='cancel'><gone xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>",
        "<presence/>",
    ])
    func ignored(_ xml: String) throws {
        var book = PresenceBook()
        #expect(book.update(try presence(xml)) == nil)
        #expect(book.best(for: self.romeo) == nil)
    }

    @Test("negative priority resources are available and tracked")
    func negativePriority() throws {
        var book = PresenceBook()
        let change = book.update(try presence("<presence from='romeo@example.net/bot'><priority>-1</priority></presence>"))
        #expect(change?.best?.priority == -1)
        #expect(book.best(for: self.romeo)?.from?.resourcepart == "bot")
    }

    @Test("priority parsing: in range kept, out of range or junk reads as 0", arguments: [
        ("-128", Int8(-128)), ("127", 127), ("128", 0), ("-129", 0), (" 5 ", 5), ("abc", 0), ("", 0), ("+7", 7),
    ])
    func priorityParsing(_ text: String, _ expected: Int8) throws {
        let parsed = try presence("<presence from='romeo@example.net/a'><priority>\(text)</priority></presence>")
        #expect(parsed.priority == expected)
    }

    @Test("the tracked count is kept as presences come and go, equal to a recount after every step")
    func trackedCountIsIncremental() throws {
        var book = PresenceBook()
        var model: [String: Set<String>] = [:]  // bare → resources
        var random = SplitMix64(state: 42)
        for _ in 0..<5_000 {
            let contact = "c\(random.next() % 20)@example.net"
            let resource = "r\(random.next() % 5)"
            switch random.next() % 4 {
            case 0, 1:
                _ = book.update(try presence("<presence from='\(contact)/\(resource)'/>"))
                model[contact, default: []].insert(resource)
            case 2:
                _ = book.update(try presence("<presence type='unavailable' from='\(contact)/\(resource)'/>"))
                model[contact]?.remove(resource)
            default:
                _ = book.update(try presence("<presence type='unavailable' from='\(contact)'/>"))
                model[contact] = nil
            }
            #expect(book.trackedCount == model.values.reduce(0) { $0 + $1.count })
            #expect(book.isTracking(try JID("\(contact)/\(resource)")) == (model[contact]?.contains(resource) ?? false))
        }
    }
}
