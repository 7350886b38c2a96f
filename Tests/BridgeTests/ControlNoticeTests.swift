import Testing

@testable import Bridge
@testable import BridgeState

@Suite("Control notices between instances")
struct ControlNoticeTests {
    @Test("each notice survives its payload; a transport name may hold spaces; the sender's own and unreadable ones are ignored")
    func roundTrip() {
        let notices: [ControlNotice] = [.routesChanged, .reconnect(transport: "work"), .reconnect(transport: "my fifo"), .retry(sequences: [1, 1_048_577]), .drop(sequences: [7])]
        for notice in notices {
            #expect(ControlNotice(payload: notice.payload(from: "node-a"), heardBy: "node-b") == notice)
            #expect(ControlNotice(payload: notice.payload(from: "node-a"), heardBy: "node-a") == nil, "its own")
        }
        for bad in ["", "node-a", "node-a routes extra", "node-a reconnect", "node-a retry x,y", "node-a drop ", "node-a launch rockets"] {
            #expect(ControlNotice(payload: bad, heardBy: "node-b") == nil, "\(bad)")
        }
    }

    @Test("long lists of sequences go in several notices, each within PostgreSQL's payload limit, together the whole list")
    func parts() {
        let sequences = (1...701).map { Int64.max - Int64($0) }
        let parts = ControlNotice.retry(sequences: sequences).parts
        #expect(parts.count == 3)
        #expect(parts.allSatisfy { $0.payload(from: "node-a").utf8.count < 8_000 })
        let joined = parts.flatMap { notice -> [Int64] in
            guard case .retry(let part) = notice else { return [] }
            return part
        }
        #expect(joined == sequences)
        #expect(ControlNotice.routesChanged.parts == [.routesChanged])
    }
}
