import Foundation
import IntegrationSupport
import Testing

@Suite("integration test bodies run on their own threads", .onTestBodyThreads)
struct TestBodyThreadsTests {
    @Test("a body, its child tasks and its resumptions after a sleep run on TestBodyThreads")
    func bodiesRunThere() async throws {
        #expect(Self.threadName().hasPrefix("test-body-"))
        async let child = Self.threadName()
        #expect(await child.hasPrefix("test-body-"))
        try await Task.sleep(for: .milliseconds(1))
        #expect(Self.threadName().hasPrefix("test-body-"))
    }

    @Test("an unstructured task, as a test's XMPP session runs in, keeps the shared pool")
    func unstructuredTasksDoNot() async {
        let name = await Task { Self.threadName() }.value
        #expect(!name.hasPrefix("test-body-"))
    }

    private static func threadName() -> String {
        Thread.current.name ?? ""
    }
}
