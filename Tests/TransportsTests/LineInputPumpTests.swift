import Foundation
import Logging
import NIOConcurrencyHelpers
import TestSupport
import Testing
import TransportCore

@testable import LocalTransport

/// Local input through the pump, from a real pipe: what is relayed and what is logged
/// (issue 13, defect 12: a repaired line is relayed and logged, never silently).
@Suite("LineInputPump")
struct LineInputPumpTests {
    /// Records the messages handed to the bridge.
    final class RecordingHandler: TransportEventHandler {
        let bodies = NIOLockedValueBox<[String]>([])

        func handle(_ event: TransportEvent, from transport: String) async -> TransportEventOutcome {
            if case .message(let message) = event { self.bodies.withLockedValue { $0.append(message.body ?? "") } }
            return .accepted
        }
    }

    /// Writes `bytes` into a pipe, closes it, and runs the pump to the end of input.
    static func pump(_ bytes: [UInt8], policy: LineSplitter.InvalidUTF8Policy) async -> (bodies: [String], logs: [(Logger.Level, String)]) {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        #expect(bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == bytes.count)
        close(ends[1])
        let recorder = LogRecorder()
        let logger = recorder.logger("pump-test")
        let handler = RecordingHandler()
        let pump = LineInputPump(transport: "stdin", options: LocalInputOptions(maxLineBytes: 64, invalidUTF8: policy, nick: "shell"), handler: handler, logger: logger)
        await pump.run(descriptor: ends[0])
        close(ends[0])
        return (handler.bodies.withLockedValue { $0 }, recorder.leveled.map { ($0.level, $0.message) })
    }

    @Test("invalid UTF-8 under replace: relayed with U+FFFD, and a warning names it")
    func repairedLinesAreLogged() async {
        let (bodies, logs) = await Self.pump(Array("fine\n".utf8) + [0x62, 0x61, 0xFF, 0x64, 0x0A] + Array("also fine\n".utf8), policy: .replace)
        #expect(bodies == ["fine", "ba\u{FFFD}d", "also fine"])
        #expect(logs.filter { $0.0 == .warning }.map(\.1) == ["input line had invalid UTF-8; relayed with U+FFFD in its place"])
    }

    @Test("invalid UTF-8 under reject and an oversize line: not relayed, each logged, the next line intact")
    func rejectedLinesAreLogged() async {
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: 200) + [0x0A]
        let (bodies, logs) = await Self.pump([0xC3, 0x28, 0x0A] + long + Array("next\n".utf8), policy: .reject)
        #expect(bodies == ["next"])
        #expect(logs.filter { $0.0 == .warning }.map(\.1) == ["input line dropped: invalid UTF-8", "input line dropped: longer than the limit"])
    }
}
