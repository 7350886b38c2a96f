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

/// Every problem found in a configuration file, reported together.
struct ConfigurationError: Error, CustomStringConvertible {
    var file: String
    var problems: [ConfigurationProblem]

    var description: String {
        "\(self.file): \(self.problems.count) problem\(self.problems.count == 1 ? "" : "s")\n"
            + self.problems.map { "  \($0)" }.joined(separator: "\n")
    }
}
