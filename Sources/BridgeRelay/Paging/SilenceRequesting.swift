import Foundation

/// Creates and expires silences in Alertmanager (API v2, `POST /api/v2/silences`,
/// `DELETE /api/v2/silence/{id}`) for `silence` and `unsilence` from the chat.
package protocol SilenceRequesting: Sendable {
    /// The new silence's id.
    func createSilence(url: String, matchers: [String: String], startsAt: Date, endsAt: Date, createdBy: String, comment: String) async throws -> String
    func expireSilence(url: String, id: String) async throws
}
