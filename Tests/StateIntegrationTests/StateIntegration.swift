import Testing

/// Every suite of this target, one test at a time. Their store calls block (SQLite, libpq),
/// as the daemon's do on its journal's thread; here they run on the threads async tests
/// share (two on a 2-core machine), and several at once starved the in-process XMPP
/// sessions of other targets. One at a time, they hold at most one of those threads.
@Suite("State against real databases", .serialized)
enum StateIntegration {}
