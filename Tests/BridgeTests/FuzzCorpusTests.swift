import Foundation
import Testing

@testable import Bridge
@testable import BridgeCommand

/// The fuzz harness (`scripts/fuzz.sh`) on its seed corpus, every cut of each seed and
/// some flipped bytes, in the ordinary test run: a parser that traps on any of them fails
/// here too, without a fuzzing build.
@Suite("fuzz targets on the seed corpus")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/corpus").standardized

    static func seeds(_ target: FuzzTarget) throws -> [[UInt8]] {
        let folder = corpus.appendingPathComponent(target.rawValue)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        return try names.map { Array(try Data(contentsOf: folder.appendingPathComponent($0))) }
    }

    static func run(_ target: FuzzTarget, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { target.run($0) }
    }

    @Test(arguments: FuzzTarget.allCases)
    func seedsCutsAndFlips(target: FuzzTarget) throws {
        let seeds = try Self.seeds(target)
        #expect(!seeds.isEmpty, "no seeds for \(target.rawValue)")
        for seed in seeds {
            Self.run(target, seed)
            // Every cut for small seeds, 64 evenly spaced ones for large ones.
            let step = max(1, seed.count / 64)
            for length in stride(from: 0, to: seed.count, by: step) { Self.run(target, Array(seed[..<length])) }
            // Deterministic flips (the same every run).
            var state = UInt64(seed.count) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<32 where !seed.isEmpty {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                var flipped = seed
                flipped[Int(state >> 33) % flipped.count] = UInt8(truncatingIfNeeded: state >> 17)
                Self.run(target, flipped)
            }
        }
    }
}
