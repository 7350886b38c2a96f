/// One thing wrong in `bridge.toml`: where (a TOML path such as `accounts.work.port`),
/// what, and how to fix it.
package struct ConfigurationProblem: Hashable, Sendable, CustomStringConvertible {
    package var path: String
    package var message: String
    package var hint: String?

    package var description: String {
        "\(self.path): \(self.message)" + (self.hint.map { " (hint: \($0))" } ?? "")
    }

    package init(path: String, message: String, hint: String? = nil) {
        self.path = path
        self.message = message
        self.hint = hint
    }
}
