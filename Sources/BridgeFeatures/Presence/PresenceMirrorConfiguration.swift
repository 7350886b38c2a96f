/// One `[[presence_mirror]]` entry: account `to` shows what the user's other clients on
/// account `from` show.
package struct PresenceMirrorConfiguration: Sendable, Equatable {
    package var from: String
    package var to: String

    package static let keys = ["from", "to"]

    package init(from: String, to: String) {
        self.from = from
        self.to = to
    }
}
