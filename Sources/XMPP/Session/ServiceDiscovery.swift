/// Service Discovery requests and answers (XEP-0030): what an entity is and supports
/// (disco#info, §3), and which entities it lists (disco#items, §4), with the extended
/// information forms some entities add (XEP-0128).
///
/// Pure: builds request IQs and reads result IQs; the session sends them.
public enum ServiceDiscovery {
    /// The disco#info namespace (XEP-0030 §3).
    public static let infoNamespace = "http://jabber.org/protocol/disco#info"
    /// The disco#items namespace (XEP-0030 §4).
    public static let itemsNamespace = "http://jabber.org/protocol/disco#items"
    /// The data forms namespace (XEP-0004), for extended information (XEP-0128).
    public static let dataFormsNamespace = "jabber:x:data"

    /// What a disco#info result says about an entity (XEP-0030 §3.1; XEP-0128 §2).
    public struct Info: Hashable, Sendable {
        /// Each identity's `category` and `type` (XEP-0030 §3.1).
        public var identities: [Identity]
        /// The `var` of every `<feature/>`.
        public var features: Set<String>
        /// Extended information forms (XEP-0128), each by its `FORM_TYPE`: every other
        /// field's `var` with its values, in order.
        public var forms: [String: [String: [String]]]

        public struct Identity: Hashable, Sendable {
            public var category: String
            public var type: String

            public init(category: String, type: String) {
                self.category = category
                self.type = type
            }
        }

        public init(identities: [Identity] = [], features: Set<String> = [], forms: [String: [String: [String]]] = [:]) {
            self.identities = identities
            self.features = features
            self.forms = forms
        }

        /// Reads the `<query xmlns='http://jabber.org/protocol/disco#info'/>` of a result;
        /// nil when the result has none. Identities without category or type, features
        /// without `var`, and forms without a `FORM_TYPE` are skipped; the first form of a
        /// `FORM_TYPE` counts (XEP-0128 §2 allows one per type).
        public init?(result: IQ) {
            guard result.type == .result, let query = result.payload, query.name == "query", query.namespace == ServiceDiscovery.infoNamespace else {
                return nil
            }
            var info = Info()
            for child in query.elements {
                switch (child.name, child.namespace) {
                case ("identity", ServiceDiscovery.infoNamespace):
                    guard let category = child[attribute: "category"], let type = child[attribute: "type"] else { continue }
                    info.identities.append(Identity(category: category, type: type))
                case ("feature", ServiceDiscovery.infoNamespace):
                    if let feature = child[attribute: "var"] { info.features.insert(feature) }
                case ("x", ServiceDiscovery.dataFormsNamespace):
                    guard child[attribute: "type"] == "result", let form = Self.form(child), info.forms[form.type] == nil else { continue }
                    info.forms[form.type] = form.fields
                default:
                    continue
                }
            }
            self = info
        }

        /// A form's `FORM_TYPE` and its other fields (XEP-0068 §3).
        private static func form(_ element: XMLElement) -> (type: String, fields: [String: [String]])? {
            var formType: String?
            var fields: [String: [String]] = [:]
            for field in element.elements where field.name == "field" && field.namespace == ServiceDiscovery.dataFormsNamespace {
                guard let name = field[attribute: "var"] else { continue }
                let values = field.elements.filter { $0.name == "value" && $0.namespace == ServiceDiscovery.dataFormsNamespace }.map(\.text)
                if name == "FORM_TYPE" {
                    formType = values.first
                } else if fields[name] == nil {
                    fields[name] = values
                }
            }
            return formType.map { (type: $0, fields: fields) }
        }
    }

    /// A disco#info request to `to` (XEP-0030 §3.1).
    public static func infoRequest(id: String, to: JID) -> IQ {
        IQ(type: .get, id: id, to: to, payload: XMLElement(name: "query", namespace: Self.infoNamespace))
    }

    /// A disco#items request to `to` (XEP-0030 §4.1).
    public static func itemsRequest(id: String, to: JID) -> IQ {
        IQ(type: .get, id: id, to: to, payload: XMLElement(name: "query", namespace: Self.itemsNamespace))
    }

    /// The entities a disco#items result lists (XEP-0030 §4.2), in order, without
    /// repeats. Items with a `node` (a part of an entity, not an entity of its own) and
    /// items whose `jid` is not a valid JID are skipped; at most `limit` are returned.
    public static func items(in result: IQ, limit: Int) -> [JID] {
        guard result.type == .result, let query = result.payload, query.name == "query", query.namespace == Self.itemsNamespace else {
            return []
        }
        var items: [JID] = []
        for item in query.elements where item.name == "item" && item.namespace == Self.itemsNamespace && item[attribute: "node"] == nil {
            guard items.count < limit else { break }
            guard let jid = item[attribute: "jid"].flatMap({ try? JID($0) }), !items.contains(jid) else { continue }
            items.append(jid)
        }
        return items
    }
}
