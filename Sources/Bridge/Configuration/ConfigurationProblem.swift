/// One thing wrong in `bridge.toml`: where (a TOML path such as `accounts.work.port`),
/// what, and how to fix it.
struct ConfigurationProblem: Hashable, Sendable, CustomStringConvertible {
    var path: String
    var message: String
    var hint: String?

    var description: String {
        "\(self.path): \(self.message)" + (self.hint.map { " (hint: \($0))" } ?? "")
    }
}
