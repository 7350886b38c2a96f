import Foundation

/// A clock that advances one second per reading, from a whole-second epoch time (so dates
/// survive the stores' millisecond precision).
final class SteppingClock: @unchecked Sendable {
    private let lock = NSLock()
    private var readings = 0
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// The time of the n-th reading.
    func time(_ n: Int) -> Date { self.start.addingTimeInterval(TimeInterval(n)) }

    /// Reads the clock.
    var now: @Sendable () -> Date {
        { [self] in
            self.lock.withLock {
                defer { self.readings += 1 }
                return self.time(self.readings)
            }
        }
    }
}
