/// Checks `bridge.toml`'s bytes before TOMLKit parses them, for what its toml++ parser
/// cannot take: bytes that are not UTF-8 (TOML 1.0 §"Spec": a TOML file must be UTF-8),
/// and a table header whose name starts with anything but a bare-key character or a quote
/// (`[é]`, `[# …`, `[[ é]]`), on which toml++ 3 fails an internal assertion and aborts the
/// process (found by fuzzing: `check` and a SIGHUP reload crashed on such a file). Both
/// are reported as ordinary configuration problems instead.
package enum TOMLPrecheck {
    /// The first problem, with its line and column (1-based), or nil.
    package static func problem(in bytes: [UInt8]) -> ConfigurationProblem? {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = Self.firstInvalidUTF8(bytes)
            let (line, column) = Self.position(of: offset, in: bytes)
            return ConfigurationProblem(path: "(line \(line), column \(column))", message: "the file is not valid UTF-8", hint: "save it as UTF-8 (TOML requires it)")
        }
        var scanner = Scanner()
        // Lines split on LF by scalars (a CR LF pair is one Character), each without its CR.
        for (index, line) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var scalars = Array(line)
            if scalars.last == "\r" { scalars.removeLast() }
            guard let (column, problem) = scanner.problem(in: scalars) else { continue }
            return ConfigurationProblem(path: "(line \(index + 1), column \(column))", message: problem.message, hint: problem.hint)
        }
        return nil
    }

    package enum Problem {
        case tableName
        case braceInArray

        package var message: String {
            switch self {
            case .tableName: "a table name must start with a letter, digit, '_', '-' or a quote"
            case .braceInArray: "'}' where an array expects a value"
            }
        }

        package var hint: String {
            switch self {
            case .tableName: "write [name] or [\"any name\"]"
            case .braceInArray: "close the array with ']' (an inline table is { … })"
            }
        }
    }

    /// Just enough of TOML's lexing to find what toml++ aborts on: table headers (told
    /// apart from array values continued on their own line), strings (one-line and
    /// multi-line), comments, and the nesting of arrays and inline tables.
    package struct Scanner {
        /// Open arrays (`[`) and inline tables (`{`), innermost last.
        private var containers: [Unicode.Scalar] = []
        /// Right after an array's `[` or a `,` in it: a value (or `]`) comes next.
        private var expectingArrayValue = false
        private var multiline: [Unicode.Scalar]?

        /// The (1-based) column of what toml++ cannot take on this line, and what it is.
        package mutating func problem(in line: [Unicode.Scalar]) -> (Int, Problem)? {
            var index = 0
            if self.multiline == nil, self.containers.isEmpty {
                var start = 0
                while start < line.count, line[start] == " " || line[start] == "\t" { start += 1 }
                if start < line.count, line[start] == "[" {
                    // `[` or `[[`, then blanks, then the name.
                    var name = start + 1
                    if name < line.count, line[name] == "[" { name += 1 }
                    while name < line.count, line[name] == " " || line[name] == "\t" { name += 1 }
                    guard name < line.count, Self.startsName(line[name]) else { return (name + 1, .tableName) }
                    return nil
                }
            }
            while index < line.count {
                if let delimiter = self.multiline {
                    guard let end = Self.find(delimiter, in: line, from: index) else { return nil }
                    index = end + 3
                    self.multiline = nil
                    continue
                }
                let scalar = line[index]
                if scalar == " " || scalar == "\t" || scalar == "\r" {
                    index += 1
                    continue
                }
                if scalar == "#" { return nil }
                if self.expectingArrayValue, scalar == "}" { return (index + 1, .braceInArray) }
                self.expectingArrayValue = false
                switch scalar {
                case "\"", "'":
                    if index + 2 < line.count, line[index + 1] == scalar, line[index + 2] == scalar {
                        self.multiline = [scalar, scalar, scalar]
                        index += 3
                        continue
                    }
                    index += 1
                    while index < line.count, line[index] != scalar {
                        index += scalar == "\"" && line[index] == "\\" ? 2 : 1
                    }
                case "[":
                    self.containers.append("[")
                    self.expectingArrayValue = true
                case "{":
                    self.containers.append("{")
                case "]":
                    if self.containers.last == "[" { self.containers.removeLast() }
                case "}":
                    if self.containers.last == "{" { self.containers.removeLast() }
                case ",":
                    self.expectingArrayValue = self.containers.last == "["
                default:
                    break
                }
                index += 1
            }
            return nil
        }

        private static func startsName(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", "_", "-", "\"", "'": true
            default: false
            }
        }

        /// Where `delimiter` closes a multi-line string on this line; in a basic string
        /// (`\"\"\"`) an escaped character is skipped.
        private static func find(_ delimiter: [Unicode.Scalar], in line: [Unicode.Scalar], from start: Int) -> Int? {
            var index = start
            while index + 2 < line.count {
                if delimiter[0] == "\"", line[index] == "\\" {
                    index += 2
                    continue
                }
                if line[index] == delimiter[0], line[index + 1] == delimiter[1], line[index + 2] == delimiter[2] { return index }
                index += 1
            }
            return nil
        }
    }

    /// The byte offset of the first sequence that is not UTF-8.
    private static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .error: return offset
            case .emptyInput: return offset
            }
        }
    }

    private static func position(of offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (line, column)
    }
}
