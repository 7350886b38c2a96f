import Foundation
import Logging
import NIOCore
import XMPP

/// Alertmanager's silences API v2 (`POST /api/v2/silences` → `{"silenceID": …}`,
/// `DELETE /api/v2/silence/{id}`), over the library's HTTP client: plain `http` is
/// allowed, since `alertmanager_url` is the operator's own setting and Alertmanager
/// listens without TLS by default.
package struct AlertmanagerClient: SilenceRequesting {
    /// Why a request did not give a silence.
    package enum Failure: Error, CustomStringConvertible {
        case http(HTTPSClientError)
        case unexpectedAnswer(String)

        package var description: String {
            switch self {
            case .http(let error): "\(error)"
            case .unexpectedAnswer(let text): "unexpected answer: \(text.prefix(200))"
            }
        }
    }

    package let client: HTTPSClient

    package init(group: any EventLoopGroup, logger: Logger) {
        var configuration = HTTPSClient.Configuration(requestTimeout: .seconds(15), allowInsecureHTTP: true)
        configuration.connectTimeout = .seconds(5)
        self.client = HTTPSClient(configuration: configuration, eventLoopGroup: group, logger: logger)
    }

    /// The request body of a silence: every label equal (not a regular expression).
    package static func silenceBody(matchers: [String: String], startsAt: Date, endsAt: Date, createdBy: String, comment: String) -> [UInt8] {
        /// A label equal to a value (API v2 `matchers[]`).
        struct Matcher: Encodable {
            package var name: String
            package var value: String
            package var isRegex = false
            package var isEqual = true
        }
        /// The body of `POST /api/v2/silences`.
        struct Silence: Encodable {
            package var matchers: [Matcher]
            package var startsAt: String
            package var endsAt: String
            package var createdBy: String
            package var comment: String

            package init(matchers: [Matcher], startsAt: String, endsAt: String, createdBy: String, comment: String) {
                self.matchers = matchers
                self.startsAt = startsAt
                self.endsAt = endsAt
                self.createdBy = createdBy
                self.comment = comment
            }
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let silence = Silence(
            matchers: matchers.sorted { $0.key < $1.key }.map { Matcher(name: $0.key, value: $0.value) },
            startsAt: formatter.string(from: startsAt), endsAt: formatter.string(from: endsAt), createdBy: createdBy, comment: comment
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(silence)) ?? Data())
    }

    package func createSilence(url: String, matchers: [String: String], startsAt: Date, endsAt: Date, createdBy: String, comment: String) async throws -> String {
        let body = Self.silenceBody(matchers: matchers, startsAt: startsAt, endsAt: endsAt, createdBy: createdBy, comment: comment)
        let response: HTTPSClient.Response
        do {
            response = try await self.client.post(url: "\(url)/api/v2/silences", contentType: "application/json", body: ByteBuffer(bytes: body))
        } catch {
            throw Failure.http(error)
        }
        let text = String(decoding: response.bodyBytes, as: UTF8.self)
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.bodyBytes)) as? [String: Any], let id = object["silenceID"] as? String,
            !id.isEmpty
        else { throw Failure.unexpectedAnswer(text) }
        return id
    }

    package func expireSilence(url: String, id: String) async throws {
        // Alertmanager's ids are UUIDs: nothing else goes into the URL's path.
        guard (1...64).contains(id.utf8.count), id.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }) else {
            throw Failure.unexpectedAnswer("'\(id.prefix(80))' is not a silence id")
        }
        do {
            _ = try await self.client.delete(url: "\(url)/api/v2/silence/\(id)")
        } catch {
            throw Failure.http(error)
        }
    }
}
