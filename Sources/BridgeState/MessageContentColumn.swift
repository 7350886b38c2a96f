import Foundation
import TransportCore

/// How ``MessageContent`` is stored in the `content` column of `queue` and `dead_letters`
/// (migration v8): JSON with sorted keys, NULL for plain text (most rows). A copy that asks
/// for a receipt keeps that word (``MessageContent/wantsReceipt``) across a restart.
package enum MessageContentColumn {
    /// The column of a plain copy that asks for a receipt (a 1:1 link's copy of a message
    /// from Conversations, which always asks): the JSON below, written and read without a
    /// coder, which costs more than the rest of the row.
    static let wantsReceiptOnly = #"{"wantsReceipt":true}"#

    package static func encode(_ content: MessageContent) -> String? {
        guard !content.isEmpty || content.wantsReceipt != nil else { return nil }
        if content == MessageContent(wantsReceipt: true) { return Self.wantsReceiptOnly }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(content)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A column this build cannot read (written by a newer one) reads as plain text: the
    /// delivery still goes out, with its text.
    package static func decode(_ column: String?) -> MessageContent {
        guard let column else { return MessageContent() }
        if column == Self.wantsReceiptOnly { return MessageContent(wantsReceipt: true) }
        return (try? JSONDecoder().decode(MessageContent.self, from: Data(column.utf8))) ?? MessageContent()
    }
}
