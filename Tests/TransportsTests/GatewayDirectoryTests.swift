import Testing
import XMPP

@testable import GatewayComponent

/// What a gateway answers (XEP-0030, XEP-0100, XEP-0077, XEP-0199, XEP-0054), without I/O.
@Suite("GatewayDirectory")
struct GatewayDirectoryTests {
    static let directory = GatewayDirectory(domain: "gw.example", name: "Home", registration: .allowlist, allow: ["*@work.example"])

    static func iq(_ type: IQ.Kind, from: String = "alice@work.example/phone", to: String = "gw.example", _ payload: XMLElement) -> XMLElement {
        var iq = IQ(type: type, id: "q1", to: try? JID(to), payload: payload)
        iq.header.from = try? JID(from)
        return iq.element
    }

    static func query(_ namespace: String, _ children: [XMLElement] = []) -> XMLElement {
        var query = XMLElement(name: "query", namespace: namespace)
        for child in children { query.append(child) }
        return query
    }

    static func text(_ name: String, _ namespace: String, _ value: String) -> XMLElement {
        var element = XMLElement(name: name, namespace: namespace)
        element.append(text: value)
        return element
    }

    static let nobody: @Sendable (JID) -> (account: String, configured: Bool)? = { _ in nil }

    /// The reply's type, error condition and payload.
    static func reply(_ answer: GatewayDirectory.Answer) -> (type: String?, condition: StanzaError.Condition?, payload: XMLElement?, from: String?) {
        guard case .reply(let element) = answer, let iq = try? IQ(element: element) else { return (nil, nil, nil, nil) }
        return (iq.type.rawValue, iq.error?.condition, iq.payload, iq.from?.description)
    }

    @Test("disco#info of the gateway: identity gateway/xmpp with its name, and the features; the answer comes from the gateway")
    func gatewayInfo() {
        let answer = Self.reply(Self.directory.answer(Self.iq(.get, Self.query(GatewayDirectory.Namespace.discoInfo)), linked: Self.nobody))
        #expect(answer.type == "result" && answer.from == "gw.example")
        let identity = answer.payload?.firstChild(named: "identity")
        #expect(identity?[attribute: "category"] == "gateway" && identity?[attribute: "type"] == "xmpp" && identity?[attribute: "name"] == "Home")
        let features = answer.payload?.elements.compactMap { $0.name == "feature" ? $0[attribute: "var"] : nil } ?? []
        #expect(Set(features).isSuperset(of: ["jabber:iq:register", "jabber:iq:gateway", "http://jabber.org/protocol/disco#info", "urn:xmpp:ping"]))
    }

    @Test("disco#info of a puppet: a client named after its contact; of a puppet that stands for nothing: item-not-found")
    func puppetInfo() {
        let answer = Self.reply(Self.directory.answer(Self.iq(.get, to: "bob\\40home.example@gw.example", Self.query(GatewayDirectory.Namespace.discoInfo)), linked: Self.nobody))
        #expect(answer.payload?.firstChild(named: "identity")?[attribute: "name"] == "bob@home.example")
        #expect(answer.from == "bob\\40home.example@gw.example")
        let none = Self.reply(Self.directory.answer(Self.iq(.get, to: "plain@gw.example", Self.query(GatewayDirectory.Namespace.discoInfo)), linked: Self.nobody))
        #expect(none.condition == .itemNotFound)
    }

    @Test("jabber:iq:gateway: the prompt, then an address becomes its puppet; a non-address is jid-malformed")
    func translation() {
        let prompt = Self.reply(Self.directory.answer(Self.iq(.get, Self.query(GatewayDirectory.Namespace.gateway)), linked: Self.nobody))
        #expect(prompt.payload?.firstChild(named: "prompt")?.text == "Address")
        let set = Self.query(GatewayDirectory.Namespace.gateway, [Self.text("prompt", GatewayDirectory.Namespace.gateway, " bob@home.example ")])
        let translated = Self.reply(Self.directory.answer(Self.iq(.set, set), linked: Self.nobody))
        #expect(translated.payload?.firstChild(named: "jid")?.text == "bob\\40home.example@gw.example")
        let bad = Self.query(GatewayDirectory.Namespace.gateway, [Self.text("prompt", GatewayDirectory.Namespace.gateway, "not an address")])
        #expect(Self.reply(Self.directory.answer(Self.iq(.set, bad), linked: Self.nobody)).condition == .jidMalformed)
    }

    @Test("registration form for an allowed user (username, password, data form); forbidden for a stranger; registered users see <registered/>")
    func registrationForm() {
        let form = Self.reply(Self.directory.answer(Self.iq(.get, Self.query(GatewayDirectory.Namespace.register)), linked: Self.nobody))
        #expect(form.type == "result")
        let fields = form.payload?.firstChild(named: "x", namespace: GatewayDirectory.Namespace.dataForms)?.elements.compactMap { $0[attribute: "var"] } ?? []
        #expect(fields == ["FORM_TYPE", "username", "password"])
        let stranger = Self.reply(Self.directory.answer(Self.iq(.get, from: "eve@evil.example/x", Self.query(GatewayDirectory.Namespace.register)), linked: Self.nobody))
        #expect(stranger.condition == .forbidden)
        let registered = Self.reply(Self.directory.answer(Self.iq(.get, Self.query(GatewayDirectory.Namespace.register)), linked: { _ in ("home", false) }))
        #expect(registered.payload?.firstChild(named: "registered") != nil)
    }

    @Test("a submitted form or plain fields ask the bridge to register; missing password or bad address are refused; a stranger is forbidden")
    func registrationSubmitted() throws {
        var form = XMLElement(name: "x", namespace: GatewayDirectory.Namespace.dataForms, attributes: [XMLAttribute(name: "type", value: "submit")])
        for (name, value) in [("username", "bob@home.example"), ("password", "pw 1")] {
            var field = XMLElement(name: "field", namespace: GatewayDirectory.Namespace.dataForms, attributes: [XMLAttribute(name: "var", value: name)])
            field.append(Self.text("value", GatewayDirectory.Namespace.dataForms, value))
            form.append(field)
        }
        guard case .register(let user, let address, let password, _) = Self.directory.answer(Self.iq(.set, Self.query(GatewayDirectory.Namespace.register, [form])), linked: Self.nobody) else {
            Issue.record("not a registration")
            return
        }
        #expect(user.description == "alice@work.example" && address.description == "bob@home.example" && password == "pw 1")
        let plain = Self.query(GatewayDirectory.Namespace.register, [Self.text("username", GatewayDirectory.Namespace.register, "bob@home.example"), Self.text("password", GatewayDirectory.Namespace.register, "x")])
        guard case .register = Self.directory.answer(Self.iq(.set, plain), linked: Self.nobody) else {
            Issue.record("plain fields not read")
            return
        }
        let noPassword = Self.query(GatewayDirectory.Namespace.register, [Self.text("username", GatewayDirectory.Namespace.register, "bob@home.example")])
        #expect(Self.reply(Self.directory.answer(Self.iq(.set, noPassword), linked: Self.nobody)).condition == .notAcceptable)
        let badAddress = Self.query(GatewayDirectory.Namespace.register, [Self.text("username", GatewayDirectory.Namespace.register, "home.example"), Self.text("password", GatewayDirectory.Namespace.register, "x")])
        #expect(Self.reply(Self.directory.answer(Self.iq(.set, badAddress), linked: Self.nobody)).condition == .jidMalformed)
        #expect(Self.reply(Self.directory.answer(Self.iq(.set, from: "eve@evil.example/x", plain), linked: Self.nobody)).condition == .forbidden)
    }

    @Test("<remove/>: unregisters a registered user; not-allowed for one linked in the file; registration-required for others")
    func unregistration() {
        let remove = Self.query(GatewayDirectory.Namespace.register, [XMLElement(name: "remove", namespace: GatewayDirectory.Namespace.register)])
        guard case .unregister(let user, _) = Self.directory.answer(Self.iq(.set, remove), linked: { _ in ("home", false) }) else {
            Issue.record("not an unregistration")
            return
        }
        #expect(user.description == "alice@work.example")
        #expect(Self.reply(Self.directory.answer(Self.iq(.set, remove), linked: { _ in ("home", true) })).condition == .notAllowed)
        #expect(Self.reply(Self.directory.answer(Self.iq(.set, remove), linked: Self.nobody)).condition == .registrationRequired)
    }

    @Test("ping answers; a vCard request to a puppet goes to the bridge for linked users only; unknown requests get service-unavailable; answers and id-less stanzas get nothing")
    func others() {
        #expect(Self.reply(Self.directory.answer(Self.iq(.get, XMLElement(name: "ping", namespace: "urn:xmpp:ping")), linked: Self.nobody)).type == "result")
        let vcard = Self.iq(.get, to: "bob\\40home.example@gw.example", XMLElement(name: "vCard", namespace: "vcard-temp"))
        guard case .vCard(_, let contact, _) = Self.directory.answer(vcard, linked: { _ in ("home", true) }) else {
            Issue.record("no vCard action")
            return
        }
        #expect(contact == "bob@home.example")
        #expect(Self.reply(Self.directory.answer(vcard, linked: Self.nobody)).condition == .registrationRequired)
        #expect(Self.reply(Self.directory.answer(Self.iq(.get, XMLElement(name: "query", namespace: "urn:example:unknown")), linked: Self.nobody)).condition == .serviceUnavailable)
        guard case .none = Self.directory.answer(Self.iq(.result, XMLElement(name: "query", namespace: "jabber:iq:version")), linked: Self.nobody) else {
            Issue.record("a result was answered")
            return
        }
        guard case .none = Self.directory.answer(XMLElement(name: "iq", namespace: XMPPNamespace.client, attributes: [XMLAttribute(name: "type", value: "get")]), linked: Self.nobody) else {
            Issue.record("an id-less request was answered")
            return
        }
    }

    @Test("the gateway's pings go to the server's domain with a resource: ejabberd 24.12 drops a component's IQ to a bare JID under mod_privilege")
    func pingAddress() throws {
        let address = ComponentConnection<ContinuousClock>.pingAddress(serverDomain: try JID("Example.test"))
        #expect(address.description == "example.test/xmpp-bridge-ping")
        #expect(address.localpart == nil)
    }
}
