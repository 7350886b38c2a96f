import IntegrationSupport
import Testing

/// Every suite of this target, one test at a time, on the test bodies' own threads
/// (``TestBodyThreads``). Their store calls block (SQLite, libpq), as the daemon's do on its
/// journal's thread; on the threads async tests share (two on a 2-core machine) several at
/// once starved the in-process XMPP sessions of other targets.
@Suite("State against real databases", .onTestBodyThreads, .serialized)
enum StateIntegration {}
