import TransportCore
import XMPP

/// The XMPP transport's mapping between the bridge's ``MessageContent`` and the XMPP
/// library's `RichContent` (the XEPs' elements). `reuploadMaxBytes` is the bridge's
/// instruction to this transport and has no XML form.
extension MessageContent {
    public init(_ rich: RichContent) {
        self.init(
            url: rich.url, replaceID: rich.replaceID, replyTo: rich.replyTo, replyFallback: rich.replyFallback, reactionTo: rich.reactionTo,
            reactions: rich.reactions, retractID: rich.retractID, encryption: rich.encryption, receiptFor: rich.receiptFor,
            receiptDisplayed: rich.receiptDisplayed, wantsReceipt: rich.wantsReceipt
        )
    }
}

extension RichContent {
    public init(_ content: MessageContent) {
        self.init(
            url: content.url, replaceID: content.replaceID, replyTo: content.replyTo, replyFallback: content.replyFallback,
            reactionTo: content.reactionTo, reactions: content.reactions, retractID: content.retractID, encryption: content.encryption,
            receiptFor: content.receiptFor, receiptDisplayed: content.receiptDisplayed, wantsReceipt: content.wantsReceipt
        )
    }
}
