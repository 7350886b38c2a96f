import Foundation

/// A folder under the system temporary folder for one test, removed when the value is
/// released.
public final class TemporaryFolder: Sendable {
    public let url: URL

    public init() throws {
        self.url = FileManager.default.temporaryDirectory.appendingPathComponent("xmpp-bridge-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: self.url, withIntermediateDirectories: true)
    }

    /// The path of `relative` inside the folder.
    public func path(_ relative: String) -> String { self.url.appendingPathComponent(relative).path }

    deinit { try? FileManager.default.removeItem(at: self.url) }
}
