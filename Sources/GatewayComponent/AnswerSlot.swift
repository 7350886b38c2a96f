import XMPP

/// Where the answer to one request of a ``ComponentConnection`` lands: registered before the
/// request is written, so an answer that comes before anyone waits is kept. Used only
/// inside the link's actor.
final class AnswerSlot {
    private var result: Result<XMLElement, any Error>?
    private var continuation: CheckedContinuation<XMLElement, any Error>?

    /// The answer, once there (at once if it came already).
    func answer(isolation: isolated (any Actor)? = #isolation) async throws -> XMLElement {
        if let result = self.result { return try result.get() }
        return try await withCheckedThrowingContinuation { self.continuation = $0 }
    }

    /// Settles the slot; later settlements are ignored.
    func settle(_ result: Result<XMLElement, any Error>) {
        guard self.result == nil else { return }
        self.result = result
        self.continuation?.resume(with: result)
        self.continuation = nil
    }
}
