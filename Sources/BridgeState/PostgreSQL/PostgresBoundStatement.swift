/// One statement of a journal commit whose values are sent apart from its text, as bound
/// parameters (`$1` …, text; nil is NULL): an account's OMEMO keys and its FAST token
/// (XEP-0484). PostgreSQL writes the text of a statement that fails into its log
/// (`log_min_error_statement`, on by default) but not its parameters
/// (`log_parameter_max_length_on_error`, 0 by default), so a lost lease (SQLSTATE XB001)
/// or a timeout puts no secret in its error log. (Logging every statement,
/// `log_statement = all`, writes parameters too: the server's administrator's choice.)
package struct PostgresBoundStatement: Equatable, Sendable {
    package var sql: String
    package var parameters: [String?]

    package init(sql: String, parameters: [String?]) {
        self.sql = sql
        self.parameters = parameters
    }

    /// A statement written for SQLite's numbered placeholders (`?1` … `?9`, as
    /// ``OMEMOSchema`` writes them) with PostgreSQL's (`$1` …).
    package init(numbered sql: String, values: [OMEMOSchemaValue]) {
        var text = ""
        var previous: Character?
        for character in sql {
            if let question = previous {
                text.append(question == "?" && character.isASCII && character.isNumber ? "$" : question)
            }
            previous = character
        }
        if let previous { text.append(previous) }
        self.sql = text
        self.parameters = values.map { value in
            switch value {
            case .text(let string): string
            case .integer(let integer): String(integer)
            }
        }
    }
}
