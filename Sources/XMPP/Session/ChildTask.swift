/// Runs a step of a long-lived task in a child task that ends with the step.
///
/// A task keeps the largest stack of async frames it ever ran, slab by slab, for as long as
/// it lives (docs/performance.md), so the deep steps of the session's long-lived task (a
/// login, taking a connection over: once a connection each) run in children. Not in an
/// `async let` child: that one is allocated in the parent's own stack allocator, where a
/// slab it needed would stay with the parent; a task group's child is allocated on its own
/// and freed when it ends. (Measured alone, this moved nothing: what a login left on the
/// session's task was the configuration copied in the parent's frame, now copied in the
/// child's.) The price is one allocation a step, which is why the transport's batch of
/// events, taken for every batch relayed, stays an `async let`.
public enum ChildTask {
    /// `operation`'s value, from a child task of a group of its own; nil only if the group
    /// gave none, which its one child rules out.
    public static func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) async -> T? {
        await withTaskGroup(of: T.self) { group in
            group.addTask(operation: operation)
            return await group.next()
        }
    }
}
