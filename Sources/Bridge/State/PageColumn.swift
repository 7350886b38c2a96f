import Foundation
import TransportCore

/// How a ``Page`` is stored in the `pages` table's `state` column (migration v12): JSON
/// with sorted keys and dates as seconds since 1970.
enum PageColumn {
    static func encode(_ page: Page) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return (try? encoder.encode(page)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// nil for a column this build cannot read.
    static func decode(_ column: String) -> Page? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(Page.self, from: Data(column.utf8))
    }
}

/// How a postponed ``Delivery`` is stored in `postponed_deliveries.delivery` (migration v12): JSON.
enum PostponedDeliveryColumn {
    static func encode(_ delivery: Delivery) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(delivery)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static func decode(_ column: String) -> Delivery? {
        try? JSONDecoder().decode(Delivery.self, from: Data(column.utf8))
    }
}
