/// PostgreSQL's side of ``DeliveryRow``: its rows as literals in a script
/// (``SQLLiteral``), and its column lists as written in statements.
extension DeliveryRow {
    /// `row` as a parenthesized list of literals.
    static func literals(_ row: [Value]) -> String {
        let literals = row.map { value in
            switch value {
            case .text(let text): SQLLiteral.text(text)
            case .integer(let number): String(number)
            case .time(let date): SQLLiteral.time(date)
            }
        }
        return "(" + literals.joined(separator: ", ") + ")"
    }

    static let queueColumnList = DeliveryRow.queueColumns.joined(separator: ", ")
    static let deadLetterColumnList = DeliveryRow.deadLetterColumns.joined(separator: ", ")
    static let relayColumnList = DeliveryRow.relayColumns.joined(separator: ", ")
}
