import Foundation

/// How a ``Page`` is stored in the `pages` table's `state` column (migration v12): JSON
/// with sorted keys and dates as seconds since 1970.
package enum PageColumn {
    package static func encode(_ page: Page) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return (try? encoder.encode(page)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// nil for a column this build cannot read.
    package static func decode(_ column: String) -> Page? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(Page.self, from: Data(column.utf8))
    }
}
