import Foundation
import Logging
import NIOPosix
import TestServers
import Testing

@testable import Bridge
@testable import BridgeRelay

/// The silences client (issue 24): the request body Alertmanager's API v2 takes, and bad
/// input ending in clear errors before or instead of a request.
@Suite("Alertmanager silences client")
struct AlertmanagerClientTests {
    @Test("a silence's body: every common label as an equal, non-regex matcher, RFC 3339 times, creator and comment")
    func body() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let bytes = AlertmanagerClient.silenceBody(
            matchers: ["job": "node", "alertname": "DiskFull"], startsAt: start, endsAt: start.addingTimeInterval(7200), createdBy: "alice@work.example", comment: "c"
        )
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let matchers = try #require(object["matchers"] as? [[String: Any]])
        #expect(matchers.map { $0["name"] as? String } == ["alertname", "job"])
        #expect(matchers.allSatisfy { $0["isRegex"] as? Bool == false && $0["isEqual"] as? Bool == true })
        #expect(object["startsAt"] as? String == "2027-01-15T08:00:00.000Z")
        #expect(object["endsAt"] as? String == "2027-01-15T10:00:00.000Z")
        #expect(object["createdBy"] as? String == "alice@work.example" && object["comment"] as? String == "c")
    }

    @Test("an id that is no UUID never reaches a URL; an Alertmanager that is not there is a clear error")
    func badInput() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = AlertmanagerClient(group: group, logger: Logger(label: "alertmanager-test"))
        let port = try ProsodyServer.freeLoopbackPorts(count: 1)[0]
        for id in ["../../api/v2/alerts", "", "id with space", "ü1", String(repeating: "a", count: 65)] {
            await #expect(throws: AlertmanagerClient.Failure.self) { try await client.expireSilence(url: "http://127.0.0.1:\(port)", id: id) }
        }
        do {
            _ = try await client.createSilence(url: "http://127.0.0.1:\(port)", matchers: ["alertname": "x"], startsAt: Date(), endsAt: Date(), createdBy: "a", comment: "")
            Issue.record("a silence from nowhere")
        } catch let failure as AlertmanagerClient.Failure {
            guard case .http = failure else { Issue.record("not an HTTP failure: \(failure)"); return }
            #expect("\(failure)".isEmpty == false)
        }
        try await group.shutdownGracefully()
    }
}
