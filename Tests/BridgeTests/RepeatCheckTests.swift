import Testing

@testable import BridgeRelay
@testable import BridgeState

/// The pipeline's repeat and echo check (issue 40), without the pipeline.
@Suite("RepeatCheck")
struct RepeatCheckTests {
    @Test("a key is handled once per source; remembering it journals it, and every window keys a trim; forgetting makes a retry new")
    func keys() {
        var check = RepeatCheck(window: 3)
        #expect(!check.handled("k1", from: "work"))
        let first = check.remember("k1", from: "work")
        guard case .seen(let transport, let key) = first.first, first.count == 1 else {
            Issue.record("expected one seen entry, got \(first)")
            return
        }
        #expect(transport == "work" && key == "k1")
        #expect(check.handled("k1", from: "work"))
        #expect(!check.handled("k1", from: "home"), "keys are per source")
        _ = check.remember("k2", from: "work")
        let third = check.remember("k3", from: "work")
        #expect(third.count == 2, "the window's third key also trims the journal's")
        if case .trimSeen(let transport, let keep) = third.last {
            #expect(transport == "work" && keep == 3)
        } else {
            Issue.record("expected a trim, got \(third)")
        }
        #expect(check.remember("k4", from: "work").count == 1, "the count starts again after a trim")
        check.forget("k4", from: "work")
        #expect(!check.handled("k4", from: "work"))
    }

    @Test("restored keys count as handled; a source forgotten (handed over) has none")
    func restoreAndForget() {
        var check = RepeatCheck(window: 10)
        check.restore(["a", "b"], for: "work")
        #expect(check.handled("a", from: "work") && check.handled("b", from: "work"))
        check.forget(source: "work")
        #expect(!check.handled("a", from: "work"))
    }

    @Test("relay ids given lately are known as echoes; a receipt goes back once")
    func echoesAndReceipts() {
        var check = RepeatCheck(window: 10, relayIDPrefix: "r", relayIDs: 2, passedBack: 2)
        check.relayed("r1")
        #expect(check.echo("r1") == true)
        #expect(check.echo("r2") == nil, "ours, not given lately: the id map knows")
        #expect(check.echo("m1") == false, "not ours")
        let first = check.passBack("received work m1")
        let again = check.passBack("received work m1")
        let displayed = check.passBack("displayed work m1")
        #expect(first && !again && displayed)
    }
}
