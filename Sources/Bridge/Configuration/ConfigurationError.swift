/// Every problem found in a configuration file, reported together.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var file: String
    package var problems: [ConfigurationProblem]

    package var description: String {
        "\(self.file): \(self.problems.count) problem\(self.problems.count == 1 ? "" : "s")\n"
            + self.problems.map { "  \($0)" }.joined(separator: "\n")
    }

    package init(file: String, problems: [ConfigurationProblem]) {
        self.file = file
        self.problems = problems
    }
}
