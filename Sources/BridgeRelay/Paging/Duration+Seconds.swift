import Foundation

/// A `Duration` as the `TimeInterval` dates are moved by.
extension Duration {
    /// In seconds, as a `TimeInterval`.
    package var seconds: TimeInterval {
        Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18
    }
}
