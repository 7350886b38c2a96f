/// Every problem found in a configuration file, reported together.
struct ConfigurationError: Error, CustomStringConvertible {
    var file: String
    var problems: [ConfigurationProblem]

    var description: String {
        "\(self.file): \(self.problems.count) problem\(self.problems.count == 1 ? "" : "s")\n"
            + self.problems.map { "  \($0)" }.joined(separator: "\n")
    }
}
