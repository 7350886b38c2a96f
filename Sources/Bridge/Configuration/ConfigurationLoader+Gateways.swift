import Foundation
import GatewayComponent
import TOMLKit
import XMPP

extension ConfigurationLoader {
    /// One `[gateway.NAME]` table, or nil when it has a problem.
    package mutating func gateway(_ name: String, _ table: TOMLTable, accounts: [String: AccountConfiguration]) -> GatewayConfiguration? {
        let path = Self.path("gateway", name)
        self.rejectUnknownKeys(in: table, at: path, allowed: GatewayConfiguration.keys)
        var domain: String?
        if let text = self.nonEmptyString(table, "component", path, hint: "the component's domain as the server declares it, e.g. component = \"home.work.example\"") {
            if let jid = try? JID(text), jid.localpart == nil, jid.resourcepart == nil {
                domain = jid.domainpart
            } else {
                self.problem("\(path).component", "'\(text)' is not a domain", "e.g. component = \"home.work.example\"")
            }
        } else if table["component"] == nil {
            self.problem("\(path).component", "is missing", "add component = \"home.work.example\", the domain declared on the server")
        }
        let host = self.nonEmptyString(table, "host", path, hint: "the server's component listener, e.g. host = \"127.0.0.1\"") ?? "127.0.0.1"
        let port = self.integer(table, "port", path, in: 1...65535, hint: "the server's component port, e.g. port = 5347") ?? 5347
        let allowRemote = self.flag(table, "allow_remote", path) ?? false
        if !allowRemote, !XMPPClient.isLoopback(host) {
            self.problem(
                "\(path).host", "\(host) is not a loopback address, and a component link has no TLS",
                "run the bridge beside the server (host = \"127.0.0.1\"), or set allow_remote = true for a path secured another way (a tunnel, a private network)"
            )
        }
        var sources: [PasswordSource] = []
        if let file = self.string(table, "secret_file", path) {
            let resolved = self.resolve(file)
            if !FileManager.default.isReadableFile(atPath: resolved) {
                self.problem("\(path).secret_file", "cannot read \(resolved)", "create it with the component secret, mode 0600")
            }
            sources.append(.file(resolved))
        }
        if let variable = self.string(table, "secret_env", path) { sources.append(.environment(variable)) }
        if sources.count != 1 {
            self.problem(path, sources.isEmpty ? "has no secret" : "has more than one secret source", "set exactly one of secret_file, secret_env")
        }
        let displayName = self.string(table, "name", path)
        let registration: RegistrationPolicy = self.choice(table, "registration", path, what: "registration policy") ?? .allowlist
        var allow: [String] = []
        if let value = table["allow"] {
            if let array = value.array, array.allSatisfy({ $0.tomlValue.string != nil }) {
                allow = array.compactMap { $0.tomlValue.string }
            } else {
                self.problem("\(path).allow", "must be an array of JID patterns", "e.g. allow = [\"*@work.example\"]")
            }
        }
        if registration == .allowlist, allow.isEmpty, table["registration"] != nil {
            self.problem("\(path).allow", "is empty, so nobody may register", "list who may, e.g. allow = [\"*@work.example\"], or set registration = \"closed\"")
        }
        let keepalive = self.age(table, "keepalive", path)
        var serverDomain: String?
        if let text = self.nonEmptyString(table, "server_domain", path, hint: "the server's own domain, e.g. server_domain = \"work.example\"") {
            if let jid = try? JID(text), jid.localpart == nil, jid.resourcepart == nil {
                serverDomain = jid.domainpart
            } else {
                self.problem("\(path).server_domain", "'\(text)' is not a domain", "e.g. server_domain = \"work.example\"")
            }
        }
        let maxStanzaBytes = self.integer(table, "max_stanza_bytes", path, in: 4_096...16_777_216, hint: "the server's stanza size limit in bytes, e.g. 65536")
        var users: [GatewayUser] = []
        var seen: Set<String> = []
        for (userPath, userTable) in self.tableArray(table["user"], section: "\(path).user", example: "[[gateway.\(name).user]]\njid = \"alice@work.example\"\naccount = \"home\"") {
            self.rejectUnknownKeys(in: userTable, at: userPath, allowed: GatewayConfiguration.userKeys)
            var jid: JID?
            if let text = self.nonEmptyString(userTable, "jid", userPath, hint: "the user's bare JID, e.g. jid = \"alice@work.example\"") {
                if let parsed = try? JID(text), parsed.localpart != nil, parsed.resourcepart == nil {
                    jid = parsed
                } else {
                    self.problem("\(userPath).jid", "'\(text)' is not a bare JID", "e.g. jid = \"alice@work.example\"")
                }
            } else if userTable["jid"] == nil {
                self.problem("\(userPath).jid", "is missing", "add jid = \"alice@work.example\", the user on the component's server")
            }
            var account: String?
            if let text = self.nonEmptyString(userTable, "account", userPath, hint: "an account name, e.g. account = \"home\"") {
                if accounts[text] == nil {
                    self.problem("\(userPath).account", "no [accounts.\(text)]", "name an account declared in this file")
                } else {
                    account = text
                }
            } else if userTable["account"] == nil {
                self.problem("\(userPath).account", "is missing", "add account = \"home\", the account whose contacts become puppets")
            }
            guard let jid, let account else { continue }
            guard seen.insert(jid.bare.description.lowercased()).inserted else {
                self.problem("\(userPath).jid", "\(jid) is linked twice", "one account per user and gateway")
                continue
            }
            users.append(GatewayUser(jid: jid.bare.description, account: account, configured: true))
        }
        guard let domain, let secret = sources.first, sources.count == 1 else { return nil }
        var gateway = GatewayConfiguration(
            name: name, domain: domain, host: host, port: port, secret: secret, displayName: displayName, registration: registration, allow: allow,
            allowRemote: allowRemote, keepalive: keepalive ?? .seconds(60), serverDomain: serverDomain ?? GatewayConfiguration.parentDomain(of: domain),
            users: users
        )
        if let maxStanzaBytes { gateway.maxStanzaBytes = maxStanzaBytes }
        return gateway
    }
}
