import Foundation
import TransportCore

/// How a postponed ``Delivery`` is stored in `postponed_deliveries.delivery` (migration v12): JSON.
package enum PostponedDeliveryColumn {
    package static func encode(_ delivery: Delivery) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(delivery)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    package static func decode(_ column: String) -> Delivery? {
        try? JSONDecoder().decode(Delivery.self, from: Data(column.utf8))
    }
}
