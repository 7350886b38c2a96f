import Testing

/// Runs each test of a suite with ``TestBodyThreads/shared`` as its task executor preference
/// (SE-0417): the body and its child tasks run there, so its blocking waits take none of the
/// shared pool's threads.
public struct TestBodyThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> TestBodyThreadsTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(TestBodyThreads.shared) { try await function() }
    }
}

extension Trait where Self == TestBodyThreadsTrait {
    /// The test bodies run on ``TestBodyThreads``, not the shared cooperative pool.
    public static var onTestBodyThreads: Self { TestBodyThreadsTrait() }
}
