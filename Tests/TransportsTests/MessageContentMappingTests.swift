import Testing
import TransportCore
import XMPP
import XMPPMapping


/// The XMPP transport maps the bridge's ``MessageContent`` to and from the XMPP library's
/// `RichContent` field by field; only the re-upload instruction has no XML form.
@Suite("MessageContent ↔ RichContent")
struct MessageContentMappingTests {
    static let everyField = MessageContent(
        url: "https://u.test/a.png", replaceID: "p", replyTo: "r", replyFallback: "> q\n", reactionTo: "t", reactions: ["👍", "🎉"],
        retractID: "x", encryption: "OMEMO", receiptFor: "c", receiptDisplayed: true, wantsReceipt: true, reuploadMaxBytes: 1024
    )

    @Test func everyFieldButTheReuploadInstructionSurvivesTheRoundTrip() {
        var expected = Self.everyField
        expected.reuploadMaxBytes = nil
        #expect(MessageContent(RichContent(Self.everyField)) == expected)
        #expect(MessageContent(RichContent()) == MessageContent())
    }

    @Test func whatIsParsedFromAStanzaIsWhatTheBridgeSees() throws {
        let rich = RichContent(replyTo: "r-1", reactionTo: "m-2", reactions: ["👍"])
        let (body, elements) = rich.outgoing(text: "hi")
        var message = Message(type: .chat, id: "m", body: body)
        message.extensions = elements
        #expect(MessageContent(RichContent.parse(message).content) == MessageContent(replyTo: "r-1", reactionTo: "m-2", reactions: ["👍"]))
    }
}
