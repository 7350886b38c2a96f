import Testing

@testable import XMPP

/// The IQ requests waiting for their answers (RFC 6120 §8.2.3): one per id, completed by the
/// answer, failed by the deadline or the connection's end.
@Suite("PendingRequests")
struct PendingRequestsTests {
    static func answer(_ type: IQ.Kind, id: String) -> IQ {
        var iq = IQ(type: type, id: id, payload: nil)
        if type == .error { iq.error = StanzaError(.itemNotFound) }
        return iq
    }

    @Test func aResultCompletesItsRequestOnce() async throws {
        var requests = PendingRequests()
        let waiterRegistered = requests.register("a")
        let waiter = try #require(waiterRegistered)
        let again = requests.register("a")
        #expect(again == nil, "a second request with a waiting id is refused")
        requests.answer("a", with: Self.answer(.result, id: "a"))
        #expect(try await waiter.value().id == "a")
        #expect(requests.count == 0)
        // A second answer for the same id finds nobody waiting and is dropped; the id is free.
        requests.answer("a", with: Self.answer(.result, id: "a"))
        let free = requests.register("a")
        #expect(free != nil)
    }

    @Test func anErrorAnswerFailsWithItsCondition() async throws {
        var requests = PendingRequests()
        let waiterRegistered = requests.register("b")
        let waiter = try #require(waiterRegistered)
        requests.answer("b", with: Self.answer(.error, id: "b"))
        await #expect {
            _ = try await waiter.value()
        } throws: { error in
            guard case XMPPSessionError.stanzaError(let stanzaError) = error else { return false }
            return stanzaError.condition == .itemNotFound
        }
    }

    @Test func failingOneLeavesTheOthersAndTheConnectionsEndFailsAll() async throws {
        var requests = PendingRequests()
        let firstRegistered = requests.register("1")
        let first = try #require(firstRegistered)
        let secondRegistered = requests.register("2")
        let second = try #require(secondRegistered)
        let thirdRegistered = requests.register("3")
        let third = try #require(thirdRegistered)
        requests.fail("1", .timedOut(id: "1"))
        #expect(requests.count == 2)
        requests.failAll(.disconnected)
        #expect(requests.count == 0)
        for (waiter, expected) in [(first, "timed out"), (second, "disconnected"), (third, "disconnected")] {
            await #expect {
                _ = try await waiter.value()
            } throws: { error in
                switch (error as? XMPPSessionError, expected) {
                case (.timedOut(let id)?, "timed out"): id == "1"
                case (.disconnected?, "disconnected"): true
                default: false
                }
            }
        }
    }
}
