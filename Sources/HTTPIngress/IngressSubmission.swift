import Foundation
import TransportCore
import XMPP

/// One message an HTTP request submits, read from its body and headers (no I/O).
///
/// A text body (`text/plain`, curl's default `application/x-www-form-urlencoded`, or no
/// content type) is the message as it is; `Title` or `X-Title` is its subject and
/// `X-Type` its type. A JSON body `{"body": …, "subject": …, "type": …}` says the same in
/// its fields, which win over the headers. `Idempotency-Key` makes a repeat of the same
/// request relay nothing more.
public struct IngressSubmission: Hashable, Sendable {
    public var body: String
    public var subject: String?
    /// A JSON body's rich-message fields (issue 12): file URL, correction, reply, reaction, retraction.
    public var content = MessageContent()
    public var type: RelayChannel.DeliveryType?
    /// `Idempotency-Key`: 1–128 characters of `A-Z a-z 0-9 . _ : -`.
    public var idempotencyKey: String?
    /// 1 to 5: JSON `"priority"`, else the query's `?priority=`, else `X-Priority`.
    public var priority: Int?

    public init(body: String, subject: String? = nil, type: RelayChannel.DeliveryType? = nil, idempotencyKey: String? = nil) {
        self.body = body
        self.subject = subject
        self.type = type
        self.idempotencyKey = idempotencyKey
    }

    /// The kind of body, from `Content-Type` (parameters such as charset ignored).
    public enum BodyKind: Hashable, Sendable {
        case text
        case json
    }

    /// Text or JSON, or 415 for anything else (an image, multipart form data).
    public static func bodyKind(contentType: String?) -> Result<BodyKind, IngressError> {
        let media = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch media {
        case "", "text/plain", "application/x-www-form-urlencoded": return .success(.text)
        case "application/json": return .success(.json)
        default:
            if media.hasPrefix("application/"), media.hasSuffix("+json") { return .success(.json) }
            return .failure(.unsupportedType(media))
        }
    }

    /// The submission in a `POST /channels/{channel}` request.
    ///
    /// - Parameter header: a request header's value by name (any case).
    /// - Parameter query: the request's query (`priority`, between the header and the JSON field).
    public static func parse(
        contentType: String?, header: (String) -> String?, query: [String: String] = [:], body: [UInt8]
    ) -> Result<IngressSubmission, IngressError> {
        let kind: BodyKind
        switch Self.bodyKind(contentType: contentType) {
        case .success(let value): kind = value
        case .failure(let error): return .failure(error)
        }
        let key: String?
        switch Self.idempotencyKey(header("Idempotency-Key")) {
        case .success(let value): key = value
        case .failure(let error): return .failure(error)
        }
        guard let text = String(validating: body, as: UTF8.self) else { return .failure(.badRequest("body is not valid UTF-8")) }
        var submission = IngressSubmission(body: text, subject: header("Title") ?? header("X-Title"), idempotencyKey: key)
        var typeName = header("X-Type")
        switch Self.priority(query["priority"] ?? header("X-Priority"), from: query["priority"] == nil ? "X-Priority" : "priority") {
        case .success(let value): submission.priority = value
        case .failure(let error): return .failure(error)
        }
        if kind == .json {
            let fields: JSONFields
            do {
                fields = try JSONDecoder().decode(JSONFields.self, from: Data(body))
            } catch DecodingError.dataCorrupted(let context) {
                return .failure(.badRequest("bad JSON: \(context.debugDescription)"))
            } catch {
                return .failure(.unprocessable("JSON body must be {\"body\": string, \"subject\": string, \"type\": \"chat\"|\"normal\"|\"headline\"}"))
            }
            submission.content = fields.rich.content
            guard let body = fields.body ?? (submission.content.isEmpty ? nil : "") else { return .failure(.unprocessable("JSON body has no \"body\"")) }
            submission.body = body
            submission.subject = fields.subject ?? submission.subject
            typeName = fields.type ?? typeName
            if let value = fields.priority {
                switch value {
                case .number(let number):
                    guard (1...5).contains(number) else { return .failure(Self.priorityProblem("\"priority\"", "\(number)")) }
                    submission.priority = number
                case .name(let name):
                    switch Self.priority(name, from: "\"priority\"") {
                    case .success(let parsed): submission.priority = parsed
                    case .failure(let error): return .failure(error)
                    }
                }
            }
        }
        guard submission.body.contains(where: { !$0.isWhitespace }) || !submission.content.isEmpty else { return .failure(.unprocessable("empty message")) }
        if let subject = submission.subject, subject.isEmpty { submission.subject = nil }
        if let typeName {
            guard let type = RelayChannel.DeliveryType(rawValue: typeName.lowercased()) else {
                return .failure(.unprocessable("unknown type '\(typeName)'; use chat, normal or headline"))
            }
            submission.type = type
        }
        return .success(submission)
    }

    /// A priority as text: `1`…`5`, or ntfy's names `min`, `low`, `default`, `high`,
    /// `max`/`urgent`; nil when absent; 422 for anything else.
    public static func priority(_ text: String?, from origin: String) -> Result<Int?, IngressError> {
        guard let text = text?.trimmingCharacters(in: .whitespaces) else { return .success(nil) }
        let names = ["min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5]
        if let number = Int(text), (1...5).contains(number) { return .success(number) }
        if let named = names[text.lowercased()] { return .success(named) }
        return .failure(Self.priorityProblem(origin, text))
    }

    static func priorityProblem(_ origin: String, _ text: String) -> IngressError {
        .unprocessable("\(origin) '\(text.prefix(40))' is not a priority; use 1 (lowest) to 5 (urgent), or min, low, default, high, max")
    }

    /// The `Idempotency-Key` header's value, if any, or 400 when it is not 1–128
    /// characters of `A-Z a-z 0-9 . _ : -`.
    public static func idempotencyKey(_ value: String?) -> Result<String?, IngressError> {
        guard let value else { return .success(nil) }
        guard Self.isValidKey(value) else { return .failure(.badRequest("Idempotency-Key must be 1 to 128 characters of A-Z a-z 0-9 . _ : -")) }
        return .success(value)
    }

    static func isValidKey(_ key: String) -> Bool {
        (1...128).contains(key.utf8.count)
            && key.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
                case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"): true
                default: false
                }
            }
    }

    private struct JSONFields: Decodable {
        var body: String?
        var subject: String?
        var type: String?
        var priority: PriorityField?
        var rich: LocalRichFields

        enum CodingKeys: String, CodingKey {
            case body, subject, type, priority
        }

        /// `"priority": 4` or `"priority": "high"`.
        enum PriorityField: Decodable {
            case number(Int)
            case name(String)

            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let number = try? container.decode(Int.self) {
                    self = .number(number)
                } else {
                    self = .name(try container.decode(String.self))
                }
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.body = try container.decodeIfPresent(String.self, forKey: .body)
            self.subject = try container.decodeIfPresent(String.self, forKey: .subject)
            self.type = try container.decodeIfPresent(String.self, forKey: .type)
            self.priority = try container.decodeIfPresent(PriorityField.self, forKey: .priority)
            self.rich = try LocalRichFields(from: decoder)
        }
    }
}
